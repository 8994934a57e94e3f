// Reading Kubernetes manifests from YAML files and directories, with errors that name the file,
// line and column, or the object and field. Unknown kinds are reported once and skipped.
import { readFileSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { CLUSTER_SCOPED, isInputObject, objectKey, slimPod, type KubeObject } from '@turnpike/api';
import jsyaml from 'js-yaml';
import { LineCounter, parseAllDocuments } from 'yaml';
import { parseBlockYaml } from './block-yaml.js';
import { describeInvalidManifest, validateManifest } from './schema/manifest-validation.js';

export class ManifestError extends Error {}

export interface LoadedManifests {
  objects: KubeObject[];
  /** Kinds we do not watch, each listed once with the first place it was seen. */
  unknownKinds: Map<string, string>;
  /**
   * Objects of kinds we do not read that attach to others as policies do (GEP-713: `spec.targetRefs` or
   * `spec.targetRef`), e.g. another implementation's SecurityPolicy: what they target is served without them.
   */
  foreignPolicies: KubeObject[];
  files: string[];
  /** Objects the API server would refuse, one line each: left out (strict) or kept (warn). */
  invalid: string[];
  /**
   * What was skipped, one line each, as `run --dir` skips it: a dangling link, a link loop, the
   * later copy of an object defined twice.
   */
  skipped: string[];
}

/**
 * How file input meets the API server's checks (kubectl's --validate vocabulary): `strict` leaves out
 * an object the API server would refuse, `warn` keeps it and says why it would be refused, `ignore`
 * does not check.
 */
export type ManifestValidation = 'strict' | 'warn' | 'ignore';

export const MANIFEST_VALIDATIONS: readonly ManifestValidation[] = ['strict', 'warn', 'ignore'];

export interface LoadOptions {
  defaultNamespace?: string;
  validation?: ManifestValidation;
}

/** Why the API server would refuse this object (one line naming where and which fields), if it would. */
export function manifestProblem(o: KubeObject, where: string, validation: ManifestValidation): string | undefined {
  if (validation === 'ignore') return undefined;
  const errors = validateManifest(o);
  return errors.length ? describeInvalidManifest(where, o, errors) : undefined;
}

/** The label the API server gives every Namespace: its name. */
const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

const YAML_EXT = new Set(['.yaml', '.yml', '.json']);

export interface FileStamp {
  mtimeMs: number;
  size: number;
}

/**
 * The manifest files under a path (a file is taken whatever its extension), in a stable order,
 * with what a rescan compares (mtime, size). Symbolic links are followed; one that dangles, or that
 * leads back into the tree (a loop), is given to `warn` and skipped. `directories`, if given,
 * receives every directory walked.
 */
export function listManifestTree(
  root: string,
  warn: (message: string) => void,
  directories?: Set<string>,
): Map<string, FileStamp> {
  let st;
  try {
    st = statSync(root);
  } catch (e) {
    throw new ManifestError(`${root}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  const out = new Map<string, FileStamp>();
  if (st.isFile()) {
    out.set(root, { mtimeMs: st.mtimeMs, size: st.size });
    return out;
  }
  const visited = new Set<string>();
  const walk = (dir: string) => {
    let real: string;
    try {
      real = realpathSync(dir);
    } catch {
      return;
    }
    if (visited.has(real)) {
      warn(`${dir}: a symbolic link loop`);
      return;
    }
    visited.add(real);
    directories?.add(dir);
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch (e) {
      warn(`${dir}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
      return;
    }
    for (const name of names) {
      if (name.startsWith('.')) continue;
      const p = join(dir, name);
      let s;
      try {
        s = statSync(p);
      } catch (e) {
        warn(`${p}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}, a dangling link?)`);
        continue;
      }
      if (s.isDirectory()) walk(p);
      else if (s.isFile() && YAML_EXT.has(extname(name))) out.set(p, { mtimeMs: s.mtimeMs, size: s.size });
    }
  };
  walk(root);
  return out;
}

/** The manifest files under a path; a dangling link or a link loop is given to `skip`, or fails the listing. */
export function listManifestFiles(path: string, skip?: (message: string) => void): string[] {
  return [
    ...listManifestTree(
      path,
      skip ??
        ((message) => {
          throw new ManifestError(message);
        }),
    ).keys(),
  ];
}

// An anchor or alias outside quotes (`&a`, `*a`): such files take the careful path, which caps
// how far aliases expand.
const MAY_ALIAS = /(?:^|[\s[{,:])[&*][^\s,\]}]/m;

/**
 * Parses one file's text into objects. Throws ManifestError naming file:line:column.
 * The block subset most manifests are written in is read by `parseBlockYaml`, the rest by js-yaml
 * (YAML 1.2 core schema; about ten times faster than the `yaml` parser). When either fails, or an
 * object is malformed, the file is parsed again with `yaml`, which knows the positions to report.
 * All read the same schema, so they give the same objects.
 */
export function parseManifests(text: string, file: string): KubeObject[] {
  if (!MAY_ALIAS.test(text)) {
    try {
      const out: KubeObject[] = [];
      const values =
        parseBlockYaml(text) ?? jsyaml.loadAll(text, undefined, { schema: jsyaml.CORE_SCHEMA, filename: file });
      for (const value of values) {
        if (value === null || value === undefined) continue;
        for (const item of isList(value) ? (value as { items: unknown[] }).items : [value])
          out.push(checkObject(item, file));
      }
      return out;
    } catch {
      // Say precisely where: the careful parser below throws with the position.
    }
  }
  return parseCarefully(text, file);
}

function parseCarefully(text: string, file: string): KubeObject[] {
  const lineCounter = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter, prettyErrors: false });
  const out: KubeObject[] = [];
  for (const doc of Array.isArray(docs) ? docs : [docs]) {
    if (doc.errors.length) {
      const err = doc.errors[0]!;
      const pos = lineCounter.linePos(err.pos[0]);
      throw new ManifestError(`${file}:${pos.line}:${pos.col}: YAML syntax error: ${err.message.split('\n')[0]}`);
    }
    const value = doc.toJS({ maxAliasCount: 100 }) as unknown;
    if (value === null || value === undefined) continue;
    const start = doc.contents?.range?.[0] ?? 0;
    const where = `${file}:${lineCounter.linePos(start).line}`;
    const items = isList(value) ? (value as { items: unknown[] }).items : [value];
    for (const item of items) out.push(checkObject(item, where));
  }
  return out;
}

function isList(v: unknown): boolean {
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof (v as { kind?: unknown }).kind === 'string' &&
    (v as { kind: string }).kind.endsWith('List') &&
    Array.isArray((v as { items?: unknown }).items)
  );
}

function checkObject(v: unknown, where: string): KubeObject {
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw new ManifestError(`${where}: document is not an object`);
  const o = v as Partial<KubeObject>;
  if (typeof o.kind !== 'string' || !o.kind) throw new ManifestError(`${where}: document has no "kind"`);
  if (typeof o.apiVersion !== 'string' || !o.apiVersion)
    throw new ManifestError(`${where}: ${o.kind} has no "apiVersion"`);
  if (typeof o.metadata?.name !== 'string' || !o.metadata.name)
    throw new ManifestError(`${where}: ${o.kind} has no "metadata.name"`);
  return o as KubeObject;
}

/**
 * Loads every manifest under the given paths. Objects of namespaced kinds without a namespace
 * land in `defaultNamespace`, as kubectl would put them.
 */
export function loadManifests(paths: readonly string[], opts: LoadOptions = {}): LoadedManifests {
  const { defaultNamespace = 'default', validation = 'strict' } = opts;
  const skipped: string[] = [];
  const files = paths.flatMap((path) => listManifestFiles(path, (m) => skipped.push(`${m}; skipped`)));
  const objects: KubeObject[] = [];
  const invalid: string[] = [];
  const unknownKinds = new Map<string, string>();
  const foreignPolicies: KubeObject[] = [];
  const seen = new Map<string, string>();
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      throw new ManifestError(`${file}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
    for (const o of parseManifests(text, file)) {
      if (!isInputObject(o)) {
        if (!unknownKinds.has(o.kind)) unknownKinds.set(o.kind, file);
        if (isPolicyAttachment(o)) {
          o.metadata.namespace ||= defaultNamespace;
          foreignPolicies.push(o);
        }
        continue;
      }
      normalizeNamespace(o, defaultNamespace);
      const key = objectKey(o.kind, o.metadata.namespace, o.metadata.name);
      const first = seen.get(key);
      if (first) {
        // As `run --dir` does: the copy seen first stays.
        skipped.push(`${file}: ${key} is defined twice (first in ${first}); ignoring this copy`);
        continue;
      }
      seen.set(key, file);
      const problem = manifestProblem(o, file, validation);
      if (problem) invalid.push(problem);
      // A Pod is held as the cluster source holds it (slimPod), whatever reads the files.
      if (!problem || validation === 'warn') objects.push(o.kind === 'Pod' ? slimPod(o) : o);
    }
  }
  return { objects, unknownKinds, foreignPolicies, files, invalid, skipped };
}

/** An object that names its targets as a policy does (GEP-713): `spec.targetRefs` (a list) or `spec.targetRef`. */
export function isPolicyAttachment(o: KubeObject): boolean {
  const spec = o.spec as { targetRefs?: unknown; targetRef?: unknown } | undefined;
  return Array.isArray(spec?.targetRefs) || (typeof spec?.targetRef === 'object' && spec.targetRef !== null);
}

/** Gives a manifest what the API server would on create: its namespace, generation 1, a Namespace its name label. */
export function normalizeNamespace(o: KubeObject, defaultNamespace: string): void {
  if (o.metadata.generation === undefined) o.metadata.generation = 1;
  // The API server labels every Namespace with its name, over any value given (SetDefaults_Namespace,
  // `kubernetes.io/metadata.name`), so a listener's namespace selector on that label reads files as it
  // reads a cluster.
  if (o.kind === 'Namespace' && (o.apiVersion ?? 'v1') === 'v1')
    o.metadata.labels = { ...o.metadata.labels, [NAMESPACE_NAME_LABEL]: o.metadata.name };
  if (CLUSTER_SCOPED.has(o.kind)) {
    delete o.metadata.namespace;
  } else if (!o.metadata.namespace) {
    o.metadata.namespace = defaultNamespace;
  }
}
