// What the API server would refuse when a manifest is created, checked for file input so that `run --dir`,
// `translate`, `diff` and `analyze` see the objects a cluster would hold: object names, the served
// apiVersion, and for our CRDs and the Gateway API's their OpenAPI schema and CEL rules.
import { RECORDED_API_VERSION, type KubeObject } from '@turnpike/api';
import { compileExpression, ruleExpressions } from './cel-validation.js';
import { allCrdSchemas, crdSchemaFor, type CrdSchema } from './crd-schemas.js';
import { validateValue, withDefaults, type FieldError } from './openapi-validation.js';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
// Go's time.RFC3339, the only form the API server decodes a timestamp from.
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** Every reason the API server would refuse to create this object; empty when it would accept it. */
export function validateManifest(o: KubeObject): FieldError[] {
  const errors = validateMetadata(o);
  // The live tools' stand-ins for what they cannot read (api/secret-data.ts): never served, never input.
  if (o.apiVersion === RECORDED_API_VERSION)
    errors.push({ path: 'apiVersion', message: `${o.apiVersion} is not served (it names a live tool's stand-in)` });
  const lookup = crdSchemaFor(o.apiVersion, o.kind);
  if (!lookup) return errors;
  if (!lookup.found) {
    const served = lookup.servedVersions.join(', ');
    errors.push({
      path: 'apiVersion',
      message: `${o.apiVersion} does not serve ${o.kind} (served versions: ${served})`,
    });
    return errors;
  }
  const root = lookup.schema;
  const spec = root.properties?.spec;
  if (!spec) return errors;
  const shape: CrdSchema = {
    type: 'object',
    required: root.required?.filter((f) => f === 'spec'),
    properties: { spec },
  };
  const value = { spec: withDefaults(o.spec, spec) };
  if (value.spec === undefined) delete value.spec;
  errors.push(...validateValue(value, shape, ''));
  return errors;
}

/**
 * Loads the schemas and compiles their CEL rules ahead of their first use, one rule per turn of the event
 * loop: the main thread reads only part of a large directory's first scan (workers read the rest), and a
 * rule its files did not use would otherwise be compiled at the first edit that does (0.3 s for all of
 * them). Returns how many there are and a way to stop; `done` is called when all are compiled.
 */
export function prepareManifestChecks(done?: () => void): { rules: number; stop: () => void } {
  const expressions = ruleExpressions(allCrdSchemas());
  let next = 0;
  let timer: NodeJS.Immediate | undefined;
  const step = () => {
    compileExpression(expressions[next++]!);
    if (next < expressions.length) timer = setImmediate(step);
    else {
      timer = undefined;
      done?.();
    }
  };
  if (expressions.length) timer = setImmediate(step);
  else done?.();
  return { rules: expressions.length, stop: () => timer && clearImmediate(timer) };
}

function validateMetadata(o: KubeObject): FieldError[] {
  const errors: FieldError[] = [];
  const { name, namespace, creationTimestamp } = o.metadata;
  // Services and Namespaces have DNS label names; other kinds DNS subdomains.
  const [rule, limit, what] =
    o.kind === 'Service'
      ? [DNS_1035_LABEL, 63, 'a DNS-1035 label (lowercase letters, digits and "-", starting with a letter)']
      : o.kind === 'Namespace'
        ? [DNS_LABEL, 63, 'a DNS-1123 label (lowercase letters, digits and "-")']
        : [DNS_SUBDOMAIN, 253, 'a DNS-1123 subdomain (lowercase letters, digits, "-" and ".")'];
  if (name.length > limit || !rule.test(name)) {
    errors.push({
      path: 'metadata.name',
      message: `${JSON.stringify(name)} is not ${what} of at most ${limit} characters`,
    });
  }
  if (namespace !== undefined && (namespace.length > 63 || !DNS_LABEL.test(namespace))) {
    errors.push({ path: 'metadata.namespace', message: `${JSON.stringify(namespace)} is not a DNS-1123 label` });
  }
  // Kept from file input (it orders routes), so it must be a time the API server could read.
  if (creationTimestamp !== undefined && !(typeof creationTimestamp === 'string' && RFC3339.test(creationTimestamp))) {
    const shown = JSON.stringify(creationTimestamp);
    errors.push({
      path: 'metadata.creationTimestamp',
      message: `${shown} is not an RFC 3339 time such as 2026-01-02T15:04:05Z`,
    });
  }
  return errors;
}

/** One line naming where the object came from, the object, and each field at fault. */
export function describeInvalidManifest(where: string, o: KubeObject, errors: readonly FieldError[]): string {
  const object = `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;
  const fields = errors.map((e) => `${e.path}: ${e.message}`).join('; ');
  return `${where}: ${object} is invalid, as the API server would refuse it: ${fields}`;
}
