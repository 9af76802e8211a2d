import { createHash, timingSafeEqual } from 'node:crypto';
import type { AppConfig } from './app-config';

/** What a refused scrape is told to send; `WWW-Authenticate` of a 401 from `/metrics` (RFC 6750). */
export const METRICS_CHALLENGE = 'Bearer realm="metrics"';

const sha256 = (text: string) => createHash('sha256').update(text).digest();

/**
 * Why a scrape of `/metrics` (the API's or the worker's) is refused — the message of its `401` — or
 * undefined when it may read them. The rule itself is AppConfig's `ops.metrics`.
 */
export function metricsScrapeRefusal(
  access: AppConfig['ops']['metrics'],
  authorization: string | undefined,
): string | undefined {
  if (access.open) return undefined;
  if (access.token === undefined) {
    return 'Metrics are closed in production until METRICS_TOKEN is set on the server (docs/operations.md)';
  }
  const sent = authorization?.startsWith('Bearer ') ? authorization.slice('Bearer '.length).trim() : undefined;
  if (!sent) return 'Send the metrics token: Authorization: Bearer <METRICS_TOKEN>';
  // Digests have one length, so comparing them in constant time reveals neither the token nor its length.
  if (!timingSafeEqual(sha256(sent), sha256(access.token))) return 'The metrics token is wrong';
  return undefined;
}
