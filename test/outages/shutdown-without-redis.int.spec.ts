import { createHook } from 'node:async_hooks';
import { QUEUE_CONNECTION } from '@flash-sale/queue';
import { REDIS_CLIENT, type RedisClient } from '@flash-sale/redis';
import type { INestApplicationContext } from '@nestjs/common';
import { waitFor } from '../support/fixtures';
import { useStackWorld } from '../support/stack-world';

/** Longer than ioredis's largest delay between two reconnection attempts (2 s). */
const RECONNECT_WATCH_MS = 3_000;
/** A shutdown that takes longer is one that waits for Redis to come back. */
const CLOSE_WITHIN_MS = 10_000;

/**
 * BullMQ's timers that go on for as long as a worker's jobs are active: its lock extender, which renews
 * their locks, and its stalled-job check. Those pending and keeping the process alive, by where they were
 * set, from the file's start. (A worker's blocking read also arms a one-off watchdog, which fires within
 * seconds: not one of these.)
 */
function bullmqTimers(): { pending(): string[] } {
  const timers = new Map<number, { timer: NodeJS.Timeout; setBy: string }>();
  createHook({
    init(id, type, _trigger, resource) {
      if (type !== 'Timeout') return;
      const setBy = /at (LockManager\.\w+|Worker\.stalledChecker)/.exec(new Error().stack ?? '')?.[1];
      if (setBy) timers.set(id, { timer: resource as NodeJS.Timeout, setBy });
    },
    destroy(id) {
      timers.delete(id);
    },
  }).enable();
  return {
    pending: () =>
      [...timers.values()]
        .filter(({ timer }) => timer.hasRef() && !(timer as unknown as { _destroyed: boolean })._destroyed)
        .map(({ setBy }) => setBy),
  };
}
const timersOfBullmq = bullmqTimers();

const clientsOf = (app: INestApplicationContext) =>
  [REDIS_CLIENT, QUEUE_CONNECTION].map((token) => app.get<RedisClient>(token, { strict: false }));

/**
 * An API and a worker shut down while their Redis is gone (killed, never back): the shutdown finishes,
 * and none of their Redis clients goes on reconnecting afterwards, nor BullMQ renewing the locks of jobs
 * that can never end — whose timers would keep the process alive after it should have exited. Whether the apps have noticed the loss when the shutdown begins
 * (their clients reconnecting) or not yet (a shutdown that began as Redis went away: a graceful close
 * whose QUIT and jobs can then never finish).
 */
describe.each([
  ['after the apps have noticed', true],
  ['as the shutdown begins', false],
])('shutting down while Redis is gone (a private redis-server, killed %s)', (_when, noticedFirst) => {
  const w = useStackWorld({ redis: 'private' });

  it('the API and the worker close; none of their Redis clients reconnects, no BullMQ timer goes on', async () => {
    const { stack, redisServer: redis } = w;
    const worker = stack.worker!;
    const clients = [...clientsOf(stack.api), ...clientsOf(worker)];
    await redis.kill();
    if (noticedFirst) {
      await waitFor(
        'every client to lose its connection',
        async () => clients.map((client) => client.status),
        (statuses) => statuses.every((status) => status !== 'ready'),
        10_000,
      );
      // Commands waiting for Redis to come back, as the apps' own would be: a QUIT queued behind them is
      // never sent.
      for (const client of clients) client.ping().catch(() => undefined);
    }

    // The worker's jobs cannot finish without Redis: its BullMQ workers must not wait for them, nor for a
    // QUIT that Redis will never answer.
    const closed = await Promise.race([
      Promise.all([stack.api.close(), worker.close()]).then(() => true),
      new Promise<false>((resolve) => setTimeout(() => resolve(false), CLOSE_WITHIN_MS).unref()),
    ]);
    expect(closed).toBe(true);

    const attempts: string[] = [];
    clients.forEach((client, i) => client.on('reconnecting', () => attempts.push(`client ${i}`)));
    await new Promise((resolve) => setTimeout(resolve, RECONNECT_WATCH_MS));
    expect(attempts).toEqual([]);
    expect(timersOfBullmq.pending()).toEqual([]);
  });
});
