import { Redis } from 'ioredis';
import type { RedisClient } from './redis-client';
import type { KeyBuilder } from './sale-keys';

/**
 * The stock-returned channel (`KeyBuilder.stockReturnedChannel`): grant-lease-3.lua publishes a sale's
 * id there whenever a lease adds units to its balance. The subscription has a connection of its own,
 * duplicated from `client`, because a subscribed connection can run no other command.
 */
export class StockReturnSubscription {
  private subscriber?: RedisClient;
  /** True once Redis confirmed the subscription on the current connection; false from any loss on. */
  private subscribed = false;
  /** Bumped by every loss: a confirmation that was asked for before it belongs to a dead connection. */
  private connection = 0;
  private readonly returnedHandlers: ((saleId: string) => void)[] = [];
  private readonly lostHandlers: (() => void)[] = [];
  private readonly errorHandlers: ((error: Error) => void)[] = [];

  constructor(
    private readonly client: RedisClient,
    private readonly keys: KeyBuilder,
  ) {}

  /** Units came back to the sale. */
  onStockReturned(handler: (saleId: string) => void): void {
    this.returnedHandlers.push(handler);
  }

  /** The subscription dropped (closed or reconnecting): a return published meanwhile may never arrive. */
  onLost(handler: () => void): void {
    this.lostHandlers.push(handler);
  }

  onError(handler: (error: Error) => void): void {
    this.errorHandlers.push(handler);
  }

  /**
   * Subscribes. When Redis is down this rejects, and the subscription is made again on every
   * (re)connection.
   */
  async open(): Promise<void> {
    // A single node's connection would subscribe again by itself on every reconnection (ioredis's
    // autoResubscribe) and leave that command's failure unhandled: closed while the new connection is
    // being readied, it rejects with nobody listening, which ends a Node process. The `ready` listener
    // below makes that subscription instead, its failure handled. (A cluster resubscribes through its own
    // subscriber connection, whose failures ioredis handles.)
    const subscriber =
      this.client instanceof Redis ? this.client.duplicate({ autoResubscribe: false }) : this.client.duplicate();
    this.subscriber = subscriber;
    subscriber.on('message', (_channel: string, saleId: string) => {
      for (const handler of this.returnedHandlers) handler(saleId);
    });
    for (const event of ['close', 'reconnecting', 'end']) {
      subscriber.on(event, () => {
        this.connection += 1;
        this.subscribed = false;
        for (const handler of this.lostHandlers) handler();
      });
    }
    subscriber.on('error', (error: Error) => {
      for (const handler of this.errorHandlers) handler(error);
    });
    // Subscribes on every (re)connection; Redis's answer is the confirmation `isLive` waits for (asking
    // again where a cluster has resubscribed by itself is harmless).
    subscriber.on('ready', () => void this.subscribe(subscriber).catch(() => undefined));
    await this.subscribe(subscriber);
  }

  /**
   * True while no return can go unnoticed: Redis confirmed the subscription on the connection that is
   * up now, and the client the subscription was made from (the one purchases go through) is connected.
   */
  isLive(): boolean {
    return this.subscribed && this.subscriber?.status === 'ready' && this.client.status === 'ready';
  }

  private async subscribe(subscriber: RedisClient): Promise<void> {
    const connection = this.connection;
    await subscriber.subscribe(this.keys.stockReturnedChannel);
    if (connection === this.connection) this.subscribed = true;
  }

  /** Idempotent: ioredis arms a timer for each disconnect, which one already closed never clears. */
  close(): void {
    this.subscriber?.disconnect();
    this.subscriber = undefined;
  }
}
