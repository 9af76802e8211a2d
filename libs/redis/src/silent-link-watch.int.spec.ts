import { Redis } from 'ioredis';
import { PrivateRedisServer } from '../../../test/support/private-redis';
import { waitFor } from '../../../test/support/fixtures';
import { watchForSilentLinks } from './silent-link-watch';

/**
 * watchForSilentLinks on a real Redis that goes silent: SIGSTOPped, it answers nothing while its sockets
 * stay open — what a partition leaves a client with, no error and no close. The same client unwatched
 * never hears of it.
 */
describe('a Redis link gone silent (real redis-server, SIGSTOP)', () => {
  let server: PrivateRedisServer;
  const clients: Redis[] = [];

  beforeEach(async () => {
    server = await PrivateRedisServer.start();
  });

  afterEach(async () => {
    server.signal('SIGCONT');
    for (const client of clients.splice(0)) client.disconnect();
    await server.destroy();
  });

  /** A client and what befell its connection: each close and each ready. */
  async function client(): Promise<{ redis: Redis; events: string[] }> {
    const redis = new Redis(server.url, { maxRetriesPerRequest: null });
    clients.push(redis);
    const events: string[] = [];
    redis.on('close', () => events.push('close'));
    redis.on('error', () => undefined);
    await redis.ping();
    redis.on('ready', () => events.push('ready'));
    return { redis, events };
  }

  it('closes the silent connection, and the client is itself again once the server answers', async () => {
    const watched = await client();
    const unwatched = await client();
    watchForSilentLinks(watched.redis, { probeEveryMs: 100, silentAfterMs: 500 });
    server.signal('SIGSTOP');
    await waitFor(
      'the watched connection to be closed',
      async () => [...watched.events],
      (seen) => seen.includes('close'),
      10_000,
    );
    // Nothing told the unwatched client: its socket is open, its commands simply wait.
    expect(unwatched.events).toEqual([]);
    server.signal('SIGCONT');
    await waitFor(
      'the watched client to be ready again',
      async () => [...watched.events],
      (seen) => seen.includes('ready'),
      20_000,
    );
    expect(await watched.redis.set('fs-test-silent-link', 'back')).toBe('OK');
  }, 40_000);

  it('leaves a busy but answering connection alone', async () => {
    const watched = await client();
    watchForSilentLinks(watched.redis, { probeEveryMs: 100, silentAfterMs: 1_000 });
    // Redis busy for 300 ms at a time, well within the deadline: slow is not silent.
    const busyFor300Ms = `local t = redis.call('TIME')
      repeat local n = redis.call('TIME') until (n[1] - t[1]) * 1000000 + (n[2] - t[2]) > 300000
      return 1`;
    for (let i = 0; i < 5; i++) await watched.redis.eval(busyFor300Ms, 0);
    expect(watched.events).toEqual([]);
  }, 20_000);
});
