// What can go wrong fetching a plugin, with the Fetched reason each maps to. `Pending` covers the
// transient cases (registry unreachable, timeouts, 5xx): retried, and not the user's fault.
import type { PluginFetchReason } from '@turnpike/api';

export class PluginFetchError extends Error {
  constructor(
    readonly reason: Exclude<PluginFetchReason, 'RefNotPermitted'>,
    message: string,
  ) {
    super(message);
    this.name = 'PluginFetchError';
  }

  /** Worth retrying soon: the registry may come back. */
  get transient(): boolean {
    return this.reason === 'Pending';
  }
}
