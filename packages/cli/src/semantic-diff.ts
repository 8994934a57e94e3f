// A semantic diff of two translations: per object the conditions and attachedRoutes that
// changed, per Gateway the listeners, routes and clusters added, removed or changed in the xDS
// IR, the certificates it serves that changed (fingerprint and validity, never a key), and the
// infra changes. Pure; printing is separate.
import { X509Certificate } from 'node:crypto';
import {
  DIGEST_KEY_KIND,
  DIGEST_KEY_NAME,
  digestKeyOf,
  publicPemOf,
  recordedOf,
  secretText,
  type Condition,
  type KubeObject,
  type Secret,
} from '@turnpike/api';
import type { GatewayIR, XdsIR } from '@turnpike/api';
import type { TranslateResult } from '@turnpike/translator';
import { canonical } from './canonical.js';
import { flatten } from './status-conditions.js';

type AnyStatus = Record<string, unknown>;

export interface ConditionChange {
  where: string;
  type: string;
  old?: string;
  new?: string;
}
export interface ObjectChange {
  object: string;
  change: 'added' | 'removed' | 'changed';
  conditions: ConditionChange[];
  attachedRoutes: { listener: string; old?: number; new?: number }[];
}
export interface SetChange {
  added: string[];
  removed: string[];
  changed: string[];
}
export interface GatewayXdsChange {
  gateway: string;
  change: 'added' | 'removed' | 'changed';
  listeners: SetChange;
  routes: SetChange;
  clusters: SetChange;
  /** TLS Secrets served whose content changed (a rotation, or another certificate and key). */
  certificates: CertificateChange[];
}
/** What a diff says of a certificate: public facts of its first certificate, never anything of the key. */
export interface CertificateFacts {
  fingerprint: string;
  notBefore: string;
  notAfter: string;
}
export interface CertificateChange {
  /** The Secret, `namespace/name`. */
  secret: string;
  change: 'added' | 'removed' | 'changed';
  /** Absent where the Secret is not at hand (only its digest is in the IR). */
  old?: CertificateFacts;
  new?: CertificateFacts;
}
/** A side's TLS Secrets by `namespace/name`: what its certificate says. */
export type CertificateLookup = (secret: string) => CertificateFacts | undefined;

const isoTime = (t: string | undefined) => {
  const ms = t ? Date.parse(t) : NaN;
  return Number.isNaN(ms) ? (t ?? '') : new Date(ms).toISOString().replace('.000Z', 'Z');
};

/**
 * The certificates of a side's Secrets, from `tls.crt` (or, for a live tool's stand-in, the controller's
 * record of it). `tls.key` is never read.
 */
export function certificateLookup(objects: Iterable<KubeObject>): CertificateLookup {
  const secrets = new Map<string, KubeObject>();
  for (const o of objects) if (o.kind === 'Secret') secrets.set(`${o.metadata.namespace}/${o.metadata.name}`, o);
  return (name) => {
    const secret = secrets.get(name);
    if (!secret) return undefined;
    const recorded = recordedOf(secret);
    if (recorded) {
      const c = recorded.certificate;
      return c?.fingerprint
        ? { fingerprint: c.fingerprint, notBefore: isoTime(c.notBefore), notAfter: isoTime(c.notAfter) }
        : undefined;
    }
    // Its certificate blocks, as the translator reads them: a tls.crt with more in it, or as a log keeps it.
    const crt = publicPemOf(secretText(secret as Secret, 'tls.crt'))?.pem;
    if (!crt) return undefined;
    try {
      const cert = new X509Certificate(crt);
      return { fingerprint: cert.fingerprint256, notBefore: isoTime(cert.validFrom), notAfter: isoTime(cert.validTo) };
    } catch {
      return undefined;
    }
  };
}
export interface InfraChange {
  gateway: string;
  change: 'added' | 'removed' | 'changed';
  fields: string[];
  /** After the change the rollout is held: by whom, and what waits for its release. */
  held?: { by: string; pending: string[] };
}
export interface SemanticDiff {
  objects: ObjectChange[];
  xds: GatewayXdsChange[];
  infra: InfraChange[];
  same: boolean;
  /** Set when the sides digest Secret values under different keys: certificates compared by what they show. */
  note?: string;
}

/**
 * The options of a diff's certificate comparison. `keysDiffer`: the sides digest Secret values under
 * different DigestKeys (two controller runs of a log, or a log and files: api/secret-data.ts), so their
 * digests cannot be compared; served certificates are then compared by their public facts.
 */
export interface CertificateSides {
  before?: CertificateLookup;
  after?: CertificateLookup;
  keysDiffer?: boolean;
}

/** The DigestKey a side's objects hold (base64), if any: two sides compare digests only under one key. */
export function digestKeyText(objects: Iterable<KubeObject>): string | undefined {
  for (const o of objects)
    if (o.kind === DIGEST_KEY_KIND && o.metadata.name === DIGEST_KEY_NAME) return digestKeyOf(o)?.toString('base64');
  return undefined;
}

export const KEYS_DIFFER_NOTE =
  'the two sides digest Secret values under different keys (another controller run): served certificates ' +
  'are compared by their certificate, and a change of tls.key alone is not seen';

function condText(condition: Condition | undefined): string | undefined {
  return condition ? `${condition.status}/${condition.reason}` : undefined;
}

/** The keys of either side, sorted: what a diff walks. */
function unionKeys(before: Iterable<string>, after: Iterable<string>): string[] {
  return [...new Set([...before, ...after])].sort();
}

function attached(status: AnyStatus | undefined): Map<string, number> {
  const listeners = (status?.listeners as AnyStatus[] | undefined) ?? [];
  return new Map(listeners.map((listener) => [String(listener.name), Number(listener.attachedRoutes ?? 0)]));
}

function diffObject(
  key: string,
  before: AnyStatus | undefined,
  after: AnyStatus | undefined,
): ObjectChange | undefined {
  const conditionsBefore = flatten(before);
  const conditionsAfter = flatten(after);
  const conditions: ConditionChange[] = [];
  for (const where of unionKeys(conditionsBefore.keys(), conditionsAfter.keys())) {
    const typesBefore = conditionsBefore.get(where) ?? new Map();
    const typesAfter = conditionsAfter.get(where) ?? new Map();
    for (const type of unionKeys(typesBefore.keys(), typesAfter.keys())) {
      const old = condText(typesBefore.get(type));
      const now = condText(typesAfter.get(type));
      if (old === now) continue;
      const change: ConditionChange = { where, type };
      if (old) change.old = old;
      if (now) change.new = now;
      conditions.push(change);
    }
  }
  const routesBefore = attached(before);
  const routesAfter = attached(after);
  const routes: ObjectChange['attachedRoutes'] = [];
  for (const listener of unionKeys(routesBefore.keys(), routesAfter.keys())) {
    if (routesBefore.get(listener) === routesAfter.get(listener)) continue;
    routes.push({
      listener,
      ...(routesBefore.has(listener) ? { old: routesBefore.get(listener) } : {}),
      ...(routesAfter.has(listener) ? { new: routesAfter.get(listener) } : {}),
    });
  }
  const change = !before ? 'added' : !after ? 'removed' : 'changed';
  if (change === 'changed' && !conditions.length && !routes.length) return undefined;
  return { object: key, change, conditions, attachedRoutes: routes };
}

function diffKeyed(before: Map<string, string>, after: Map<string, string>): SetChange {
  const out: SetChange = { added: [], removed: [], changed: [] };
  for (const key of unionKeys(before.keys(), after.keys())) {
    if (!before.has(key)) out.added.push(key);
    else if (!after.has(key)) out.removed.push(key);
    else if (before.get(key) !== after.get(key)) out.changed.push(key);
  }
  return out;
}

/**
 * A Gateway's IR as three keyed sets of canonical JSON: listeners, routes and clusters (with endpoints).
 * `keysDiffer`: a cluster's client certificate digest is left out (certificateChanges tells that Secret).
 */
function gatewayParts(
  gateway: GatewayIR | undefined,
  endpoints: XdsIR['endpoints'],
  keysDiffer = false,
): { listeners: Map<string, string>; routes: Map<string, string>; clusters: Map<string, string> } {
  const listeners = new Map<string, string>();
  const routes = new Map<string, string>();
  const clusters = new Map<string, string>();
  for (const port of gateway?.ports ?? []) {
    for (const listener of port.listeners) {
      const { virtualHosts, routes: l4Routes, ...rest } = listener;
      listeners.set(`${port.name} ${listener.name}`, canonical(rest));
      for (const virtualHost of virtualHosts ?? [])
        for (const route of virtualHost.routes)
          routes.set(`${virtualHost.domains.join(',')} ${route.name}`, canonical(route));
      for (const route of l4Routes ?? []) routes.set(`${port.name} ${route.name}`, canonical(route));
    }
  }
  // A cluster's endpoints are part of what changes about it.
  for (const cluster of gateway?.clusters ?? []) {
    const own = cluster.tls?.clientCertificate;
    const comparable =
      keysDiffer && own ? { ...cluster, tls: { ...cluster.tls!, clientCertificate: { secret: own.secret } } } : cluster;
    clusters.set(cluster.name, canonical({ ...comparable, endpoints: endpoints.get(cluster.name) ?? [] }));
  }
  return { listeners, routes, clusters };
}

const empty = (set: SetChange) => !set.added.length && !set.removed.length && !set.changed.length;

/** The served Secrets whose digest differs between two IRs of a Gateway. */
function certificateChanges(
  before: GatewayIR | undefined,
  after: GatewayIR | undefined,
  certs: CertificateSides,
): CertificateChange[] {
  // Under two keys the digests of the same content differ: what the certificate shows stands for it.
  const digests = (ir: GatewayIR | undefined, lookup: CertificateLookup | undefined) =>
    new Map(
      (ir?.secrets ?? []).map((s) => [s.name, certs.keysDiffer ? canonical(lookup?.(s.name) ?? null) : s.sha256]),
    );
  const set = diffKeyed(digests(before, certs.before), digests(after, certs.after));
  const facts = (change: CertificateChange['change'], secret: string): CertificateChange => {
    const old = change === 'added' ? undefined : certs.before?.(secret);
    const now = change === 'removed' ? undefined : certs.after?.(secret);
    return { secret, change, ...(old ? { old } : {}), ...(now ? { new: now } : {}) };
  };
  return [
    ...set.added.map((s) => facts('added', s)),
    ...set.removed.map((s) => facts('removed', s)),
    ...set.changed.map((s) => facts('changed', s)),
  ];
}

/** `certs`: each side's certificates, to say what a changed one was and is (without: only that it changed). */
export function semanticDiff(
  before: TranslateResult,
  after: TranslateResult,
  certs: CertificateSides = {},
): SemanticDiff {
  const objects: ObjectChange[] = [];
  for (const key of unionKeys(before.statuses.keys(), after.statuses.keys())) {
    const change = diffObject(key, before.statuses.get(key), after.statuses.get(key));
    if (change) objects.push(change);
  }
  const xds: GatewayXdsChange[] = [];
  for (const gateway of unionKeys(before.xdsIR.gateways.keys(), after.xdsIR.gateways.keys())) {
    const irBefore = before.xdsIR.gateways.get(gateway);
    const irAfter = after.xdsIR.gateways.get(gateway);
    const partsBefore = gatewayParts(irBefore, before.xdsIR.endpoints, certs.keysDiffer);
    const partsAfter = gatewayParts(irAfter, after.xdsIR.endpoints, certs.keysDiffer);
    const change: GatewayXdsChange = {
      gateway,
      change: !irBefore ? 'added' : !irAfter ? 'removed' : 'changed',
      listeners: diffKeyed(partsBefore.listeners, partsAfter.listeners),
      routes: diffKeyed(partsBefore.routes, partsAfter.routes),
      clusters: diffKeyed(partsBefore.clusters, partsAfter.clusters),
      certificates: certificateChanges(irBefore, irAfter, certs),
    };
    if (
      change.change !== 'changed' ||
      !empty(change.listeners) ||
      !empty(change.routes) ||
      !empty(change.clusters) ||
      change.certificates.length
    )
      xds.push(change);
  }
  const infra: InfraChange[] = [];
  for (const gateway of unionKeys(before.infraIR.gateways.keys(), after.infraIR.gateways.keys())) {
    const infraBefore = before.infraIR.gateways.get(gateway) as unknown as AnyStatus | undefined;
    const infraAfter = after.infraIR.gateways.get(gateway) as unknown as AnyStatus | undefined;
    if (!infraBefore || !infraAfter) {
      infra.push({ gateway, change: !infraBefore ? 'added' : 'removed', fields: [] });
      continue;
    }
    const fields = unionKeys(Object.keys(infraBefore), Object.keys(infraAfter)).filter(
      (field) => canonical(infraBefore[field]) !== canonical(infraAfter[field]),
    );
    const held = after.infraIR.gateways.get(gateway)?.held;
    if (fields.length)
      infra.push({
        gateway,
        change: 'changed',
        fields,
        ...(held ? { held: { by: held.by, pending: held.pending } } : {}),
      });
  }
  return {
    objects,
    xds,
    infra,
    same: !objects.length && !xds.length && !infra.length,
    ...(certs.keysDiffer ? { note: KEYS_DIFFER_NOTE } : {}),
  };
}
