/**
 * Every Redis key of one sale, built in this one place. All of them share the hash tag
 * `{sale:<id>}`, so every script touches a single Redis Cluster slot; scripts receive them in KEYS
 * and never build a key themselves.
 */
export class SaleKeys {
  readonly meta: string;
  readonly stock: string;
  readonly buyers: string;
  readonly reservations: string;
  readonly replays: string;
  readonly returned: string;
  readonly grants: string;
  /**
   * Stream: the reservations the workers have not written yet (the hand-off). The reservation script
   * appends to it; the workers read it through the consumer group `HANDOFF_GROUP`, and delete what
   * they wrote, so its length is the sale's unwritten backlog.
   */
  readonly handoff: string;
  /** The sale's purchase rate-limit counter (a fixed window: INCR with a TTL). */
  readonly purchaseLimit: string;
  /** The redis-lock strategies' purchase lock: its holder's owner value, with a TTL (lock-acquire-2.lua). */
  readonly lock: string;
  /** The last fencing token the sale's lock granted: a counter without TTL. */
  readonly lockFence: string;
  private readonly base: string;

  constructor(
    prefix: string,
    readonly saleId: string,
  ) {
    this.base = `${prefix}:{sale:${saleId}}`;
    this.meta = `${this.base}:meta`;
    this.stock = `${this.base}:stock`;
    this.buyers = `${this.base}:buyers`;
    this.reservations = `${this.base}:reservations`;
    this.replays = `${this.base}:replays`;
    this.returned = `${this.base}:returned`;
    this.grants = `${this.base}:grants`;
    this.handoff = `${this.base}:handoff`;
    this.purchaseLimit = `${this.base}:rl:purchase-sale`;
    this.lock = `${this.base}:lock`;
    this.lockFence = `${this.base}:lock-fence`;
  }

  /** One buyer's purchase rate-limit counter in this sale. */
  purchaseLimitOf(userId: string): string {
    return `${this.base}:rl:purchase-user:${userId}`;
  }

  token(token: string): string {
    return `${this.base}:token:${token}`;
  }

  /** Keys that make up the sale's state (token keys expire on their own). */
  all(): string[] {
    return [
      this.meta,
      this.stock,
      this.buyers,
      this.reservations,
      this.replays,
      this.returned,
      this.grants,
      this.handoff,
    ];
  }
}

/** The consumer group of every sale's hand-off stream: the order writers. */
export const HANDOFF_GROUP = 'writers';

export class KeyBuilder {
  /** Hash saleId -> drift (units), written by the reconciliation job, read by /metrics and the audit. */
  readonly reconciliation: string;
  /**
   * Pub/sub channel (not a key): the grant script publishes a sale's id here whenever a lease adds
   * units to its balance, so an API instance that remembered the sale as sold out forgets it at once.
   */
  readonly stockReturnedChannel: string;
  /**
   * Sorted set saleId -> last activity (ms): sales with purchases, hand-offs or order changes lately.
   * Background work (recovery, reconciliation) walks this index instead of every sale.
   */
  readonly activeSales: string;
  /**
   * Counter written by the durable-acknowledgement connection just before its `WAIT` (ReplicaAcks): a
   * write of that connection's own that comes after every reservation it confirms.
   */
  readonly replicaAckMarker: string;

  constructor(readonly prefix: string) {
    this.replicaAckMarker = `${prefix}:replica-ack`;
    this.reconciliation = `${prefix}:reconciliation`;
    this.activeSales = `${prefix}:active-sales`;
    this.stockReturnedChannel = `${prefix}:stock-returned`;
  }

  sale(saleId: string): SaleKeys {
    return new SaleKeys(this.prefix, saleId);
  }

  /** The key prefix of one rate limit's counters (one key per subject under it). */
  rateLimit(name: string): string {
    return `${this.prefix}:rl:${name}`;
  }
}
