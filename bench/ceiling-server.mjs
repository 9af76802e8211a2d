#!/usr/bin/env node
/**
 * The ceiling of the purchase benchmark: a bare Fastify server whose only route runs the app's own
 * reservation script — the SAME one the API runs (not named here: its file name changes with the app),
 * loaded through the built `ReservationScripts` and `KeyBuilder` of `@flash-sale/redis`, on a client
 * made by the app's own `createRedisClient` with the API's options. No JWT, no validation, no queue,
 * no logging: what is left is HTTP + JSON + one EVALSHA, i.e. the most a single Node process can get
 * out of this Redis script on this machine. The bench (bench/lib/scenarios/ceiling.mjs) starts it as a
 * child process (so its CPU is accounted like the API's), loads its sale (`ReservationScripts.load` and
 * one lease of its whole stock) and drives it with the same autocannon settings and the same kind of
 * (user, submit token) pairs as the real endpoint.
 *
 *   POST /purchase   body {"token", "userId"?}; user from the `x-user-id` header, else the body
 *                    → 202 {"orderNo","status":"QUEUED"} · refused → the API's status for the code
 *   GET  /health     → 200 (readiness, for the bench)
 *
 * Environment: PORT (required), HOST (127.0.0.1), REDIS_URL (redis://127.0.0.1:6379),
 * REDIS_KEY_PREFIX (required), CEILING_SALE_ID (required; digits, as order numbers need).
 */
import { require, requireBuilt } from './lib/app-dist.mjs';

const Fastify = require('fastify');
const {
  createRedisClient,
  KeyBuilder,
  onlyBucket,
  REQUEST_COMMAND_RETRIES,
  ReservationScripts,
} = require('@flash-sale/redis');
const { ErrorCode, OrderNumberGenerator } = require('@flash-sale/domain');

const required = (name) => {
  const value = process.env[name];
  if (!value) {
    console.error(`ceiling-server: ${name} is required`);
    process.exit(2);
  }
  return value;
};
const port = Number(required('PORT'));
const host = process.env.HOST || '127.0.0.1';
const saleId = required('CEILING_SALE_ID');
const keyPrefix = required('REDIS_KEY_PREFIX');

// The API's Redis options (RedisModule.forRoot in apps/api/src/app.module.ts), single node.
const redis = createRedisClient(
  { url: process.env.REDIS_URL || 'redis://127.0.0.1:6379', clusterNodes: [] },
  { maxRetriesPerRequest: REQUEST_COMMAND_RETRIES, enableAutoPipelining: true },
);
const scripts = new ReservationScripts(redis, new KeyBuilder(keyPrefix));
const orderNumbers = new OrderNumberGenerator();

// The API's own table from error code to HTTP status, so a refusal answers what the API would.
const { ERROR_STATUS } = requireBuilt('errorStatus');

const app = Fastify({ logger: false, keepAliveTimeout: 65_000 });

app.post('/purchase', async (request, reply) => {
  const body = request.body ?? {};
  const userId = request.headers['x-user-id'] ?? body.userId;
  for (let attempt = 0; attempt < 3; attempt++) {
    const result = await scripts.reserve({
      bucket: onlyBucket(saleId),
      userId,
      submitToken: body.token,
      quantity: 1,
      orderNo: orderNumbers.next(saleId),
    });
    if (result.kind === 'order-number-taken') continue;
    if (result.kind === 'refused') {
      void reply.status(ERROR_STATUS[result.code] ?? 500);
      return { error: { code: result.code } };
    }
    void reply.status(202);
    return { orderNo: result.orderNo, status: 'QUEUED' };
  }
  void reply.status(503);
  return { error: { code: ErrorCode.Unavailable } };
});

app.get('/health', async () => ({ ok: redis.status === 'ready' }));

// No orphan check here: the bench starts it, like the API, with a preload that stops it (SIGTERM) if
// the bench dies without cleaning up.
let stopping = false;
async function shutdown(reason) {
  if (stopping) return;
  stopping = true;
  try {
    await app.close();
  } finally {
    redis.disconnect();
    console.log(`ceiling-server: stopped (${reason})`);
    process.exit(0);
  }
}
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => shutdown(signal));

await app.listen({ port, host });
console.log(`ceiling-server: listening on http://${host}:${port}, sale ${saleId}, prefix ${keyPrefix}`);
