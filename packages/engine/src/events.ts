// The event model: everything that happens to the watched objects, from any source.
import type { KubeObject } from '@turnpike/api';

/**
 * `problem`: input that could not be taken (a file that does not parse, an update the API server
 * would refuse) or, with `fixed`, the end of such a problem. It changes no object; it is recorded so
 * that replay and the console show the moment a file broke and the moment it was fixed.
 */
export type EventType = 'upsert' | 'delete' | 'synced' | 'problem';

export interface WatchEvent {
  /** Position in the stream, assigned by the engine (1, 2, 3, ...). */
  seq: number;
  /** When the engine received it (RFC 3339 with milliseconds). */
  at: string;
  /** Which source produced it: `dir`, `kube`, `plugins`, ... */
  source: string;
  type: EventType;
  /** For `synced`: the kind that finished its first list, or `*` for the whole source. */
  kind: string;
  namespace?: string;
  name?: string;
  object?: KubeObject;
  /** For `problem`: what is wrong, or how it was fixed. */
  message?: string;
  /** For `problem`: true when this ends the problem named by `name`. */
  fixed?: boolean;
}

/** What a source emits before the engine numbers and stamps it. */
export type SourceEvent = Omit<WatchEvent, 'seq' | 'at'>;

export function upsert(source: string, object: KubeObject): SourceEvent {
  const e: SourceEvent = { source, type: 'upsert', kind: object.kind, name: object.metadata.name, object };
  if (object.metadata.namespace) e.namespace = object.metadata.namespace;
  return e;
}

export function remove(source: string, kind: string, namespace: string | undefined, name: string): SourceEvent {
  const e: SourceEvent = { source, type: 'delete', kind, name };
  if (namespace) e.namespace = namespace;
  return e;
}

export function synced(source: string, kind = '*'): SourceEvent {
  return { source, type: 'synced', kind };
}

/** A problem with input (`name` says which, e.g. a file), or its end (`fixed`). */
export function problem(source: string, name: string, message: string, fixed = false): SourceEvent {
  return { source, type: 'problem', kind: 'Input', name, message, ...(fixed ? { fixed: true } : {}) };
}
