// OCI image references as PluginInstallation.spec.image takes them:
// `host[:port]/repository[:tag][@sha256:<64 hex>]`. The registry host is required (there is no
// default registry), so a reference always says where it is fetched from.

export interface ImageReference {
  /** `host[:port]`. */
  registry: string;
  repository: string;
  tag?: string;
  digest?: string;
}

const COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const TAG = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
const DIGEST = /^sha256:[a-f0-9]{64}$/;
// localhost, a bracketed IPv6 address, or DNS labels; then an optional port.
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?';
const HOST = new RegExp(`^(?:localhost|\\[[0-9a-fA-F:]+\\]|${LABEL}(?:\\.${LABEL})*)(?::[0-9]{1,5})?$`);

/** Parses a reference; throws an Error whose message says what is wrong with it. */
export function parseImageReference(image: string): ImageReference {
  let rest = image.trim();
  if (!rest) throw new Error('is empty');
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) throw new Error(`digest "${digest}" is not sha256:<64 lowercase hex>`);
  }
  const slash = rest.indexOf('/');
  const host = slash > 0 ? rest.slice(0, slash) : '';
  // The first component is a registry host only when it looks like one (a dot, a port, localhost).
  if (!host || !(host.includes('.') || host.includes(':') || host === 'localhost') || !HOST.test(host)) {
    throw new Error(`"${image}" does not name a registry host: write host[:port]/repository[:tag][@digest]`);
  }
  let repository = rest.slice(slash + 1);
  let tag: string | undefined;
  const colon = repository.lastIndexOf(':');
  if (colon >= 0) {
    tag = repository.slice(colon + 1);
    repository = repository.slice(0, colon);
    if (!TAG.test(tag)) throw new Error(`tag "${tag}" is not a valid tag`);
  }
  if (!repository || !repository.split('/').every((c) => COMPONENT.test(c)))
    throw new Error(`repository "${repository}" is not a valid repository name (lowercase path components)`);
  if (!tag && !digest) tag = 'latest';
  return { registry: host, repository, ...(tag ? { tag } : {}), ...(digest ? { digest } : {}) };
}

/** The reference to ask the registry for: the digest when pinned, else the tag. */
export function manifestReference(r: ImageReference): string {
  return r.digest ?? r.tag ?? 'latest';
}
