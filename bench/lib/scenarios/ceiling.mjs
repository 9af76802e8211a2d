/**
 * (a) The ceiling: the app's own reservation script behind a bare Fastify server
 * (bench/ceiling-server.mjs), a child process like the API so its CPU is accounted the same way, on a
 * sale that exists only in Redis. The API and the worker sit idle meanwhile.
 */
import { require } from '../app-dist.mjs';
import { CEILING_SALE_ID, REDIS_KEY_PREFIX, SETTINGS, log } from '../settings.mjs';
import { ensureFullSpeed, withProbes } from '../process-probes.mjs';
import { startChild, state, stopChild, waitForHttp } from '../stack.mjs';

export async function runCeiling(run) {
  const { KeyBuilder } = require('@flash-sale/redis');
  const keys = new KeyBuilder(REDIS_KEY_PREFIX);
  await startCeiling(run);
  await ensureFullSpeed(run, 'ceiling', state.ceiling, async () => {
    await stopChild(state.ceiling);
    return startCeiling(run);
  });
  const ceiling = state.ceiling;
  const preloaded = await loadCeilingSale(keys);
  log(
    `ceiling server on ${run.ceilingUrl} (pid ${ceiling.pid}); sale ${CEILING_SALE_ID} preloaded ${JSON.stringify(preloaded)}`,
  );
  const ceilingLoad = (label, pairs, durationS) =>
    run.load({ key: 'ceiling', label, target: 'ceiling', pairs, expect: 202, durationS });
  log(`ceiling warm-up ${SETTINGS.warmupS}s`);
  await ceilingLoad(
    'ceiling warm-up',
    await run.buyers.preparePairs(CEILING_SALE_ID, Math.min(SETTINGS.users, 60_000)),
    SETTINGS.warmupS,
  );
  log(`preparing ${SETTINGS.users} pairs for the ceiling`);
  const measured = await ceilingLoad(
    'ceiling: bare Fastify + the reservation script (202)',
    await run.buyers.preparePairs(CEILING_SALE_ID, SETTINGS.users),
    SETTINGS.durationS,
  );
  run.results.scenarios.push(measured);
  run.answeredAsExpected('ceiling: every answer 202', measured);
  await stopChild(ceiling);
  state.ceiling = undefined;
  // Its reservations are no longer needed: give Redis the memory back before the API's scenarios.
  await state.redis.unlink(...keys.sale(CEILING_SALE_ID).all());
}

/** The ceiling's sale exists only in Redis: one incarnation, granted its whole stock in one lease. */
async function loadCeilingSale(keys) {
  const { onlyBucket, ReservationScripts } = require('@flash-sale/redis');
  const scripts = new ReservationScripts(state.redis, keys);
  const now = Date.now();
  await scripts.load(
    onlyBucket(CEILING_SALE_ID),
    {
      startsAt: new Date(now - 60_000),
      endsAt: new Date(now + 3_600_000),
      perUserLimit: 1,
      stock: SETTINGS.liveStock,
      epoch: 1,
    },
    [],
  );
  return scripts.grantLease(onlyBucket(CEILING_SALE_ID), 1, 'ceiling', SETTINGS.liveStock);
}

async function startCeiling(run) {
  const ceiling = startChild(
    'ceiling',
    'bench/ceiling-server.mjs',
    {
      ...process.env,
      PORT: String(run.ceilingPort),
      HOST: '127.0.0.1',
      REDIS_URL: run.redisUrl,
      REDIS_KEY_PREFIX,
      CEILING_SALE_ID,
    },
    withProbes({}),
  );
  state.ceiling = ceiling;
  await waitForHttp(`${run.ceilingUrl}/health`, ceiling);
  return ceiling;
}
