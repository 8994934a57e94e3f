// Credentials from a `kubernetes.io/dockerconfigjson` Secret: `{"auths": {"<host>": {auth |
// username+password | identitytoken}}}`. Keys may be bare hosts or URLs (`https://host/v1/`).

export interface RegistryCredentials {
  username: string;
  password: string;
}

function hostOf(key: string): string {
  const k = key.trim();
  if (!/^[a-z]+:\/\//i.test(k)) return k.replace(/\/.*$/, '').toLowerCase();
  try {
    return new URL(k).host.toLowerCase();
  } catch {
    return k.toLowerCase();
  }
}

/** Parses `.dockerconfigjson` (already base64-decoded); throws naming what is malformed. */
export function credentialsFor(dockerConfigJson: string, registry: string): RegistryCredentials | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(dockerConfigJson);
  } catch (e) {
    throw new Error(`.dockerconfigjson is not JSON: ${(e as Error).message}`);
  }
  const auths = (doc as { auths?: Record<string, Record<string, unknown>> })?.auths;
  if (!auths || typeof auths !== 'object') throw new Error('.dockerconfigjson has no "auths" object');
  const wanted = registry.toLowerCase();
  for (const [key, entry] of Object.entries(auths)) {
    if (hostOf(key) !== wanted || !entry || typeof entry !== 'object') continue;
    if (typeof entry.username === 'string' && typeof entry.password === 'string')
      return { username: entry.username, password: entry.password };
    if (typeof entry.auth === 'string') {
      const decoded = Buffer.from(entry.auth, 'base64').toString('utf8');
      const i = decoded.indexOf(':');
      if (i < 0) throw new Error(`.dockerconfigjson auths["${key}"].auth is not base64 of user:password`);
      return { username: decoded.slice(0, i), password: decoded.slice(i + 1) };
    }
    // An identity token is exchanged at the token endpoint as a refresh token (OAuth2); the
    // registries we know accept it as the password of the `<token>` user.
    if (typeof entry.identitytoken === 'string') return { username: '<token>', password: entry.identitytoken };
  }
  return undefined;
}
