import { EventEmitter } from 'node:events';
import type { RedisClient } from './redis-client';
import { RedisConnection } from './redis-connection';

/** A client whose connections and losses the test drives. */
class FakeClient extends EventEmitter {
  constructor(public status: 'ready' | 'connecting' | 'reconnecting') {
    super();
  }
  ready(): void {
    this.status = 'ready';
    this.emit('ready');
  }
  lose(): void {
    this.status = 'reconnecting';
    this.emit('close');
  }
}

function watched(status: FakeClient['status']): { client: FakeClient; reconnects: number[]; losses: number[] } {
  const client = new FakeClient(status);
  const connection = new RedisConnection(client as unknown as RedisClient);
  const reconnects: number[] = [];
  const losses: number[] = [];
  connection.onReconnect(() => reconnects.push(reconnects.length + 1));
  connection.onConnectionLost(() => losses.push(losses.length + 1));
  return { client, reconnects, losses };
}

describe('RedisConnection', () => {
  it('a client not connected yet: its first connection is no reconnect, and failed attempts before it are no loss', () => {
    const { client, reconnects, losses } = watched('connecting');
    client.lose();
    expect(losses).toEqual([]);
    client.ready();
    expect(reconnects).toEqual([]);

    client.lose();
    expect(losses).toEqual([1]);
    client.ready();
    expect(reconnects).toEqual([1]);
  });

  it('a client already connected: its next loss and every later connection count', () => {
    const { client, reconnects, losses } = watched('ready');
    client.lose();
    client.ready();
    client.lose();
    client.ready();
    expect(losses).toEqual([1, 2]);
    expect(reconnects).toEqual([1, 2]);
  });
});
