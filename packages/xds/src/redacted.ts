// The placeholder a debug read (`turnpike proxy-config`) is sent where a resource holds a secret.

/** What stands in for a redacted value (an inline string, so the message stays well-formed). */
export const REDACTED = '<redacted>';
