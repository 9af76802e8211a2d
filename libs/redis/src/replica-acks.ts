import { failUnansweredOnDisconnect, type RedisClient } from './redis-client';
import type { KeyBuilder } from './sale-keys';

interface Waiter {
  resolve(confirmed: number): void;
  reject(error: unknown): void;
}

/**
 * Durable acknowledgement (DURABLE_ACK=replica): waits until replicas hold every write made so far, on a
 * connection of its own. `WAIT` blocks the connection it is sent on for up to its timeout; on the shared
 * connection a missing replica would hold every other command (token issuance, rate limits, every
 * purchase) behind it.
 *
 * `WAIT` covers only the writes of the connection it is sent on, so this connection first writes a
 * marker of its own: Redis runs commands one at a time and replicates them in that order, and the
 * marker is sent after the caller's writes were answered, so a replica that has the marker has them too.
 * Callers are batched: everyone who asks while a `WAIT` is out shares the next marker and `WAIT` (one
 * pair per batch, however many purchases wait), never the one already sent, whose marker may predate
 * their writes. Standalone Redis with replicas only.
 */
export class ReplicaAcks {
  private connection?: RedisClient;
  private waiting: Waiter[] = [];
  private inFlight = false;

  constructor(
    private readonly client: RedisClient,
    private readonly keys: KeyBuilder,
  ) {}

  /** How many replicas confirmed every write answered before this call (at most `replicas`), by `timeoutMs`. */
  confirm(replicas: number, timeoutMs: number): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      if (!this.inFlight) this.sendBatch(replicas, timeoutMs);
    });
  }

  close(): void {
    this.connection?.disconnect();
  }

  private ownConnection(): RedisClient {
    const connection = this.client.duplicate();
    // A WAIT cut off by a lost connection is answered (rejected), never left hanging with the batch.
    failUnansweredOnDisconnect(connection);
    // Its failures reach the waiting purchases through their commands; the outage is reported elsewhere.
    connection.on('error', () => undefined);
    return connection;
  }

  private sendBatch(replicas: number, timeoutMs: number): void {
    const batch = this.waiting;
    this.waiting = [];
    this.inFlight = true;
    const connection = (this.connection ??= this.ownConnection());
    // Sent back to back on one connection: the marker is written, then the WAIT covers it.
    const marked = connection.incr(this.keys.replicaAckMarker);
    const waited = connection.call('WAIT', replicas, timeoutMs);
    Promise.all([marked, waited])
      .then(
        ([, confirmed]) => batch.forEach((waiter) => waiter.resolve(Number(confirmed))),
        (error: unknown) => batch.forEach((waiter) => waiter.reject(error)),
      )
      .finally(() => {
        this.inFlight = false;
        if (this.waiting.length > 0) this.sendBatch(replicas, timeoutMs);
      });
  }
}
