// What the live tools use for the Secrets and ConfigMaps they do not read (live-cluster.ts): the
// controller's record of each referenced one (api/secret-data.ts), put where the object would be as a
// stand-in the translator judges by that record. So a listener's certificate, a CA bundle or a pull
// Secret gets the verdict the controller gave it, and the tools say what it rests on: as the controller
// last saw it, from the files given, or nothing at all (a reference the record does not cover, which
// the translation reports as one this tool cannot judge rather than guessing).
import {
  CONTROLLER_NAME,
  RECORDED_API_VERSION,
  type ConfigMap,
  type KubeObject,
  type RecordedReference,
  type ReferenceRecord,
  type Secret,
} from '@turnpike/api';
import {
  recordReference,
  referenceTarget,
  secretReferences,
  snapshotFromObjects,
  usesByTarget,
  type ReferenceUse,
} from '@turnpike/translator';
import { NOT_READ_LIVE, withFilesApplied, type LiveCluster, type LiveRecord } from './live-cluster.js';

/** One referenced Secret or ConfigMap, and what a live tool judged it by. */
export interface ReferenceNote {
  /** `Kind/namespace/name`. */
  target: string;
  referrers: { from: string; field: string; use: ReferenceUse }[];
  /**
   * `record`: as the controller last saw it; `files`: as the files given have it; `unknown`: neither has
   * it, so its verdict is the controller's alone.
   */
  judged: 'record' | 'files' | 'unknown';
  recorded?: RecordedReference;
  /** Uses the record does not cover (the object is used in a way the controller has not judged yet). */
  notRecorded?: ReferenceUse[];
  /** What this tool can say of it, one line per use. */
  says: string[];
}

export interface LiveInput {
  objects: KubeObject[];
  references: ReferenceNote[];
}

const USES: ReferenceUse[] = ['caBundle', 'certificate', 'pullSecret'];
const USE_NAMES: Record<ReferenceUse, string> = {
  caBundle: 'CA bundle',
  certificate: 'certificate',
  pullSecret: 'registry credentials',
};

function recordedUses(r: RecordedReference): ReferenceUse[] {
  return USES.filter((u) => r[u] !== undefined);
}

/** A stand-in the translator judges by its record (and the Secret's type); it holds no value. */
function standIn(r: RecordedReference): KubeObject {
  return {
    apiVersion: RECORDED_API_VERSION,
    kind: r.kind,
    metadata: { namespace: r.namespace, name: r.name },
    ...(r.type !== undefined ? { type: r.type } : {}),
    recorded: r,
  };
}

const objectTarget = (o: KubeObject) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;

/**
 * The live objects (with the files applied on top, if any) and, for every Secret and ConfigMap the
 * translation may read, what stands for it: the files' object, the record's stand-in, or a stand-in
 * that tells nothing. A file object the record already describes as it is keeps the stand-in, so a
 * change set that includes an unchanged Secret or CA bundle changes nothing.
 */
export function liveInput(
  live: LiveCluster,
  files: readonly KubeObject[] = [],
  controllerName: string = CONTROLLER_NAME,
): LiveInput {
  const merged = files.length ? withFilesApplied(live.objects, files) : [...live.objects];
  const fromFiles = new Map(files.filter((f) => NOT_READ_LIVE.has(f.kind)).map((f) => [objectTarget(f), f]));
  const recorded = new Map((live.record.record?.references ?? []).map((r) => [referenceTarget(r), r]));
  const references = secretReferences(snapshotFromObjects(merged), controllerName);
  const uses = usesByTarget(references);

  const replaced = new Set<string>();
  const standIns: KubeObject[] = [];
  for (const [key, r] of recorded) {
    if (r.found === false) continue;
    const file = fromFiles.get(key);
    if (file) {
      const same = recordReference(r, file as Secret | ConfigMap, recordedUses(r));
      if (JSON.stringify(same) !== JSON.stringify(r)) continue;
      replaced.add(key);
    }
    standIns.push(standIn(r));
  }
  for (const key of uses.keys()) {
    if (recorded.has(key) || fromFiles.has(key)) continue;
    const [kind, namespace, name] = key.split('/') as ['Secret' | 'ConfigMap', string, string];
    standIns.push(standIn({ kind, namespace, name }));
  }
  const objects = [...merged.filter((o) => !replaced.has(objectTarget(o))), ...standIns];

  const notes: ReferenceNote[] = [];
  for (const [key, used] of uses) {
    const referrers = references
      .filter((r) => referenceTarget(r) === key)
      .map((r) => ({ from: r.from, field: r.field, use: r.use }));
    const r = recorded.get(key);
    const file = fromFiles.get(key);
    const [kind, namespace, name] = key.split('/') as [string, string, string];
    const what = `${kind} ${namespace}/${name}`;
    if (file && !replaced.has(key)) {
      notes.push({ target: key, referrers, judged: 'files', says: [`${what}: as the files given have it`] });
      continue;
    }
    if (!r) {
      const why = live.record.record
        ? "not in the controller's record"
        : `and there is no record from the controller (${live.record.missing ?? 'none found'})`;
      notes.push({
        target: key,
        referrers,
        judged: 'unknown',
        says: [
          `${what}: not readable here (the live tools read no Secret or ConfigMap), ${why}: the controller judges it`,
        ],
      });
      continue;
    }
    const notRecorded = r.found === false ? [] : [...used].filter((u) => r[u] === undefined).sort();
    notes.push({
      target: key,
      referrers,
      judged: 'record',
      recorded: r,
      ...(notRecorded.length ? { notRecorded } : {}),
      says: recordedLines(what, r, used, live.record),
    });
  }
  return { objects, references: notes.sort((a, b) => (a.target < b.target ? -1 : a.target > b.target ? 1 : 0)) };
}

/** What the record says of one object, for the uses it is referenced for. */
function recordedLines(
  what: string,
  r: RecordedReference,
  used: ReadonlySet<ReferenceUse>,
  live: LiveRecord,
): string[] {
  if (r.found === false) return [`${what}: the controller saw no such object`];
  const seen = `as the controller last saw it (${live.source ?? 'its record'}, ${live.record?.updated ?? ''})`;
  const out: string[] = [];
  for (const use of [...used].sort()) {
    const head = `${USE_NAMES[use]} of ${what}`;
    if (use === 'certificate' && r.certificate) {
      const c = r.certificate;
      const facts = [
        ...(c.fingerprint ? [`SHA-256 fingerprint ${c.fingerprint}`] : []),
        ...(c.dnsNames?.length ? [`DNS names ${c.dnsNames.join(', ')}`] : []),
        ...(c.notBefore ? [`valid ${c.notBefore} to ${c.notAfter}`] : []),
        ...(c.keyMatches !== undefined ? [c.keyMatches ? 'key matches' : 'key does not match'] : []),
      ];
      out.push(
        `${head}: ${seen}${facts.length ? `: ${facts.join('; ')}` : ''}` +
          (c.problem !== undefined ? `; not usable: ${c.problem}` : ''),
      );
    } else if (use === 'caBundle' && r.caBundle) {
      const b = r.caBundle;
      out.push(
        b.problem !== undefined
          ? `${head}: ${seen}; not usable: ${b.problem}`
          : `${head}: ${seen}: ${b.certificates} certificate(s), sha256 ${b.sha256}`,
      );
    } else if (use === 'pullSecret' && r.pullSecret) {
      out.push(
        `${head}: ${seen}: type ${r.type ?? '(none)'}, ` +
          (r.pullSecret.dockerConfig ? 'holds a .dockerconfigjson' : 'holds no .dockerconfigjson'),
      );
    } else
      out.push(`${head}: not readable here, and not in the controller's record for that use: the controller judges it`);
  }
  return out;
}

/** One line on what the live tools did not read, and where its verdicts came from instead. */
export function recordSummary(record: LiveRecord, notes: readonly ReferenceNote[]): string {
  const count = (j: ReferenceNote['judged']) => notes.filter((n) => n.judged === j).length;
  const base = 'the live tools read no Secret and no ConfigMap';
  const r: ReferenceRecord | undefined = record.record;
  if (!r)
    return (
      `${base}, and there is no record from the controller to judge the ${notes.length} referenced ` +
      `object(s) by: ${record.missing ?? 'none found'}; their verdicts are the controller's (its statuses)`
    );
  const unknown = count('unknown') + notes.filter((n) => n.notRecorded).length;
  return (
    `${base}: ${count('record')} referenced object(s) judged as the controller last saw them (ConfigMap ` +
    `${record.source}, updated ${r.updated})` +
    (count('files') ? `, ${count('files')} as the files have them` : '') +
    (unknown ? `; ${unknown} cannot be judged here (the controller judges them)` : '') +
    (r.omitted ? `; the record is full: ${r.omitted} reference(s) left out of it` : '')
  );
}
