// The control-plane CA at start, against an API server in memory: start() returns only once the
// serving certificate is issued, whoever's check issues it. It once returned as soon as a check had
// set the CA, while that check (the one the elector starts on winning the lease) was still issuing
// the certificate: the controller then built its plugin content server without one, and a proxy's
// fetch got alert 40 (handshake_failure) until the certificate was next renewed (the e2e test "the
// plugin server refuses a client without a certificate and serves one with a proxy certificate"
// failed so, once in three runs).
import { afterEach, describe, expect, it } from '@jest/globals';
import type { Secret } from '@turnpike/api';
import { KubeApiError, XdsAuthority, type KubeClient } from '../src/index.js';

const DAY = 86_400_000;

/** Secrets of one namespace, as the API server answers GET, POST and PUT on them. */
function secretsApi(): KubeClient {
  const secrets = new Map<string, Secret>();
  let version = 0;
  const must = async (method: string, path: string, body?: unknown) => {
    const name = path.split('/secrets')[1]?.replace(/^\//, '') ?? '';
    if (method === 'GET') {
      const s = secrets.get(name);
      if (!s) throw new KubeApiError(404, 'NotFound', `secrets "${name}" not found`);
      return s;
    }
    const s = body as Secret;
    if (method === 'POST' && secrets.has(s.metadata.name))
      throw new KubeApiError(409, 'AlreadyExists', `secrets "${s.metadata.name}" already exists`);
    const stored = { ...s, metadata: { ...s.metadata, resourceVersion: String(++version) } };
    secrets.set(s.metadata.name, stored);
    return stored;
  };
  return { must } as unknown as KubeClient;
}

let authority: XdsAuthority | undefined;
afterEach(() => authority?.stop());

describe('xDS authority', () => {
  it('start() returns only once the serving certificate is issued, when the check that set the CA is still issuing it', async () => {
    authority = new XdsAuthority({
      client: secretsApi(),
      namespace: 'turnpike-system',
      trustDomain: 'turnpike.test',
      serverNames: ['turnpike.turnpike-system.svc'],
      caValidityMs: 30 * DAY,
      certValidityMs: DAY,
      isLeader: () => true,
      checkIntervalMs: DAY,
    });
    const a = authority;
    // The moment the race needs: a check (the elector's) has created and set the CA, and is now issuing
    // the serving certificate, when start() looks (its loop waking from a backoff then).
    const started = new Promise<{ caSet: boolean; certificateAtStart: string | undefined }>((resolve) => {
      let once = false;
      a.provider.onChange(() => {
        if (once) return;
        once = true;
        const caSet = a.trustBundle !== '' && a.provider.identityPem === undefined;
        void a.start().then(() => resolve({ caSet, certificateAtStart: a.provider.identityPem }));
      });
    });
    void a.check();
    const { caSet, certificateAtStart } = await started;
    expect(caSet).toBe(true);
    // What the controller then gives the plugin content server and the xDS server.
    expect(certificateAtStart).toContain('BEGIN CERTIFICATE');
    expect(a.provider.ready).toBe(true);
  });
});
