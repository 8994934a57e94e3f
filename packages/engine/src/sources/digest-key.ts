// The controller's DigestKey (api/secret-data.ts): made at random when the process starts and fed into
// its stream as its first event, so the translator digests Secret values under it, and an event log,
// which redacts Secrets with the same key, holds it for replay. A restart makes a new one (a new run).
import { randomBytes } from 'node:crypto';
import { digestKeyObject } from '@turnpike/api';
import { of, type Observable } from 'rxjs';
import { upsert, type SourceEvent } from '../events.js';

/** The source its event names: the controller process itself. */
export const DIGEST_KEY_SOURCE = 'controller';

/** Emits the DigestKey at once; put it first among the sources, so that it comes before any Secret. */
export function digestKeySource(key: Buffer = randomBytes(32)): Observable<SourceEvent> {
  return of(upsert(DIGEST_KEY_SOURCE, digestKeyObject(key)));
}
