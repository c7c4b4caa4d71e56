/**
 * The settings the webhook tests run with, said once: receivers on 127.0.0.1 allowed (the
 * test receivers listen there), three quick retries, a short timeout, and a lease short enough
 * that a stopped worker's claims come back within a test.
 */
export const FAST_WEBHOOKS: Readonly<Record<string, string>> = Object.freeze({
  WEBHOOK_ALLOW_PRIVATE: 'true',
  WEBHOOK_RETRY_DELAYS: '0.3,0.3,0.3',
  WEBHOOK_TIMEOUT_SECONDS: '1',
  WEBHOOK_LEASE_SECONDS: '3',
});

/** FAST_WEBHOOKS with a test file's own changes (fewer retries, a longer timeout, more settings). */
export function fastWebhooks(changes: Readonly<Record<string, string>> = {}): Record<string, string> {
  return { ...FAST_WEBHOOKS, ...changes };
}
