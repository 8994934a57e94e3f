// The manifest files under a directory, with what the rescan compares (mtime, size). Symbolic
// links are followed; one that dangles, or that leads back into the tree (a loop), is reported
// and skipped, so it never stops the other files from loading.
import { readdirSync, realpathSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { ManifestError } from '../manifests.js';

export interface FileStamp { mtimeMs: number; size: number }

const YAML_EXT = new Set(['.yaml', '.yml', '.json']);

export function listManifestTree(root: string, warn: (message: string) => void): Map<string, FileStamp> {
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
      warn(`${dir}: a symbolic link loop; skipped`);
      return;
    }
    visited.add(real);
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch (e) {
      warn(`${dir}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); skipped`);
      return;
    }
    for (const name of names) {
      if (name.startsWith('.')) continue;
      const p = join(dir, name);
      let s;
      try {
        s = statSync(p);
      } catch (e) {
        warn(`${p}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}, a dangling link?); skipped`);
        continue;
      }
      if (s.isDirectory()) walk(p);
      else if (s.isFile() && YAML_EXT.has(extname(name))) out.set(p, { mtimeMs: s.mtimeMs, size: s.size });
    }
  };
  walk(root);
  return out;
}
