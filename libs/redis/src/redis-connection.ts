import type { RedisClient } from './redis-client';

/**
 * The state of the shared Redis connection, for the code that answers differently while Redis is
 * down (the MySQL fallback, limits that cannot be counted) or must act when it comes back.
 */
export class RedisConnection {
  constructor(private readonly client: RedisClient) {}

  /** Whether commands are being sent now (not queued behind a reconnect). */
  get isReady(): boolean {
    return this.client.status === 'ready';
  }

  /** Called on every (re)connection that is ready for commands. */
  onReady(listener: () => void): void {
    this.client.on('ready', listener);
  }

  /** Called whenever the connection is lost (before any reconnection). */
  onClose(listener: () => void): void {
    this.client.on('close', listener);
  }

  async ping(): Promise<void> {
    await this.client.ping();
  }
}
