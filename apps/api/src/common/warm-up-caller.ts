import { randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

const WARM_UP_CALLER_PREFIX = 'warm-up-';

/**
 * Who the startup warm-up buys as (ops/startup-warm-up.ts): a guest id no sign-in ever gives (those are
 * `u_<ulid>`), in a token only the API signs, so no outside request can pass for the warm-up. Its
 * requests are left out of the access log and the purchase metrics. Under the cluster entry a process's
 * warm-up may be answered by another process: the prefix, not this process's id, is what they recognise.
 */
export const WARM_UP_CALLER_ID = `${WARM_UP_CALLER_PREFIX}${randomBytes(8).toString('hex')}`;

export function isWarmUpRequest(request: FastifyRequest): boolean {
  return request.user?.id.startsWith(WARM_UP_CALLER_PREFIX) === true;
}
