import type { Redis } from 'ioredis';
import { waitFor } from '../../../test/support/fixtures';
import { PrivateRedisServer } from '../../../test/support/private-redis';
import { createRedisClient, REQUEST_COMMAND_RETRIES, type RedisClient } from './redis-client';
import { KeyBuilder } from './sale-keys';
import { StockReturnSubscription } from './stock-return-subscription';

/**
 * The stock-return subscription over a private redis-server that is killed and started again, with the
 * API's client options: it subscribes again on the new connection, and whatever it has in flight when it
 * is closed fails as handled rejections, never as unhandled ones (which end a Node process).
 */
describe('the stock-return subscription (a private redis-server, killed and started again)', () => {
  const keys = new KeyBuilder('fs-test-stock-returns');
  let server: PrivateRedisServer;
  let client: RedisClient;
  let subscription: StockReturnSubscription;
  let subscriber: Redis;

  beforeEach(async () => {
    server = await PrivateRedisServer.start();
    client = createRedisClient(
      { url: server.url, clusterNodes: [] },
      { maxRetriesPerRequest: REQUEST_COMMAND_RETRIES, autoResendUnfulfilledCommands: false },
    );
    client.on('error', () => undefined);
    subscription = new StockReturnSubscription(client, keys);
    subscription.onError(() => undefined);
    const duplicate = jest.spyOn(client as Redis, 'duplicate');
    await subscription.open();
    subscriber = duplicate.mock.results[0]!.value as Redis;
    await waitFor('the subscription live', async () => subscription.isLive(), Boolean, 5_000);
  });

  afterEach(async () => {
    subscription.close();
    client.disconnect();
    await server.destroy();
  });

  /** Kills Redis and waits until the subscription has noticed; `restart` starts it again. */
  async function killRedis(): Promise<{ restart: () => Promise<void> }> {
    await server.kill();
    await waitFor(
      'the loss noticed',
      async () => subscription.isLive(),
      (live) => !live,
      5_000,
    );
    return { restart: () => server.restart() };
  }

  it('subscribes again on the new connection: a return published after the restart arrives', async () => {
    const returned: string[] = [];
    subscription.onStockReturned((saleId) => returned.push(saleId));
    await (await killRedis()).restart();
    await waitFor('the subscription live again', async () => subscription.isLive(), Boolean, 10_000);
    await client.publish(keys.stockReturnedChannel, '42');
    await waitFor(
      'the return delivered',
      async () => returned,
      (saleIds) => saleIds.includes('42'),
      5_000,
    );
  });

  it('closed while its new connection is being readied: no rejection goes unhandled', async () => {
    const { restart } = await killRedis();
    // Closed right after the new connection's ready check was sent: Redis still answers it, the
    // connection turns ready on a socket that is closing, and the subscription it makes again then
    // cannot be sent before the socket is gone.
    const readyCheck = subscriber.info.bind(subscriber) as (...args: unknown[]) => Promise<string>;
    const checked = new Promise<void>((resolve) => {
      (subscriber as unknown as { info: (...args: unknown[]) => Promise<string> }).info = (...args) => {
        const answer = readyCheck(...args);
        subscription.close();
        resolve();
        return answer;
      };
    });
    await restart();
    await checked;
    await waitFor(
      'the connection ended',
      async () => subscriber.status,
      (status) => status === 'end',
      5_000,
    );
    expect(subscription.isLive()).toBe(false);
    // Jest fails the test if a rejection goes unhandled meanwhile: it is reported once the microtask queue
    // is empty, so the test lasts a few more turns.
    await new Promise((resolve) => setTimeout(resolve, 100));
  });
});
