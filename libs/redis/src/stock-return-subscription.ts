import type { RedisClient } from './redis-client';
import type { KeyBuilder } from './sale-keys';

/**
 * The stock-returned channel (`KeyBuilder.stockReturnedChannel`): grant-lease-3.lua publishes a sale's
 * id there whenever a lease adds units to its balance. The subscription has a connection of its own,
 * duplicated from `client`, because a subscribed connection can run no other command.
 */
export class StockReturnSubscription {
  private subscriber?: RedisClient;
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
   * Subscribes. When Redis is down this rejects, and ioredis subscribes by itself once it connects
   * (autoResubscribe).
   */
  async open(): Promise<void> {
    const subscriber = this.client.duplicate();
    this.subscriber = subscriber;
    subscriber.on('message', (_channel: string, saleId: string) => {
      for (const handler of this.returnedHandlers) handler(saleId);
    });
    for (const event of ['close', 'reconnecting', 'end']) {
      subscriber.on(event, () => {
        for (const handler of this.lostHandlers) handler();
      });
    }
    subscriber.on('error', (error: Error) => {
      for (const handler of this.errorHandlers) handler(error);
    });
    await subscriber.subscribe(this.keys.stockReturnedChannel);
  }

  /**
   * True while no return can go unnoticed: subscribed, and the client the subscription was made from
   * (the one purchases go through) connected too.
   */
  isLive(): boolean {
    return this.subscriber?.status === 'ready' && this.client.status === 'ready';
  }

  close(): void {
    this.subscriber?.disconnect();
  }
}
