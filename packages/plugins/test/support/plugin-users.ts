// Only a plugin something uses is fetched: the worker tests' sources give each PluginInstallation
// they upsert a user, a ProxyConfig installing it, as a cluster would need one.
import type { KubeObject } from '@turnpike/api';
import { upsert, type SourceEvent } from '@turnpike/engine';
import { Subject, type Observable } from 'rxjs';

/** A ProxyConfig in `namespace` installing these plugins (of its namespace): a use of each. */
export function installer(namespace: string, plugins: string[], name = 'installer'): KubeObject {
  return {
    apiVersion: 'turnpike.dev/v1alpha1',
    kind: 'ProxyConfig',
    metadata: { namespace, name, generation: 1 },
    spec: { plugins: plugins.map((p) => ({ name: p })) },
  };
}

/** `input`'s events, each PluginInstallation upserted after a ProxyConfig `uses-<name>` installing it. */
export function withUsers(input: Observable<SourceEvent>): Observable<SourceEvent> {
  const out = new Subject<SourceEvent>();
  input.subscribe({
    next: (e) => {
      if (e.type === 'upsert' && e.kind === 'PluginInstallation')
        out.next(upsert(e.source, installer(e.namespace!, [e.name], `uses-${e.name}`)));
      out.next(e);
    },
    complete: () => out.complete(),
  });
  return out;
}
