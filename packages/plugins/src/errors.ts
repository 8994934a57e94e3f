// What can go wrong fetching a plugin, with the Fetched reason each maps to. `Pending` covers the
// transient cases (registry unreachable, timeouts, 5xx): retried, and not the user's fault.
import type { PluginFetchReason } from '@turnpike/api';

export class PluginFetchError extends Error {
  /**
   * @param message goes into the PluginInstallation's status, where its author reads it: our own
   *   words and status codes, never what a registry (or whatever it names) answered.
   * @param detail for the controller's log only (e.g. where a refused redirect pointed).
   */
  constructor(
    readonly reason: PluginFetchReason,
    message: string,
    readonly detail?: string,
  ) {
    super(message);
    this.name = 'PluginFetchError';
  }

  /** Worth retrying soon: the registry may come back. */
  get transient(): boolean {
    return this.reason === 'Pending';
  }
}
