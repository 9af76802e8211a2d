import type { SaleLayout } from '@flash-sale/domain';
import calculateSlot from 'cluster-key-slot';

/**
 * One bucket of a sale (docs/architecture.md "Hot sales: buckets"): a slice of its leased stock with the
 * buyers hashed to it. A bucket's keys share one hash tag, so each script touches one cluster slot.
 */
export interface SaleBucket {
  readonly saleId: string;
  /** 0 .. count − 1. */
  readonly index: number;
  /** The sale's bucket count. */
  readonly count: number;
}

/** The most buckets a sale may have. */
export const MAX_SALE_BUCKETS = 16;

const CLUSTER_SLOTS = 16_384;

/** Every bucket of a sale, in index order. */
export function bucketsOf(sale: SaleLayout): SaleBucket[] {
  return Array.from({ length: sale.buckets }, (_, index) => ({ saleId: sale.id, index, count: sale.buckets }));
}

/**
 * The bucket a buyer always buys in: their submit tokens, reservations and per-user limit live there,
 * so the limit is checked by one script on one slot.
 */
export function buyerBucket(sale: SaleLayout, userId: string): SaleBucket {
  return { saleId: sale.id, index: calculateSlot(userId) % sale.buckets, count: sale.buckets };
}

/** The bucket of a sale with a single bucket (the common case, and every MySQL-only strategy). */
export function onlyBucket(saleId: string): SaleBucket {
  return { saleId, index: 0, count: 1 };
}

/** The layout of a sale with a single bucket. */
export function singleBucketSale(saleId: string): SaleLayout {
  return { id: saleId, buckets: 1 };
}

const bucketTags = new Map<string, string>();
/** Buckets whose keys a KeyBuilder keeps built; past that it starts over (old sales' buckets go). */
const MAX_CACHED_BUCKETS = 10_000;

/**
 * The hash tag of a bucket's keys. One bucket: `sale:<id>`. K buckets: `sale:<id>:<index>`, suffixed
 * `.<n>` with the smallest n that puts its slot in the index-th K-th of the slot space, so that on a
 * cluster whose masters own equal slot ranges (what `redis-cli --cluster create` makes) K buckets land
 * on K different masters when there are K or more of them.
 */
export function bucketTag(bucket: SaleBucket): string {
  if (bucket.count === 1) return `sale:${bucket.saleId}`;
  const cacheKey = `${bucket.saleId}/${bucket.index}/${bucket.count}`;
  let tag = bucketTags.get(cacheKey);
  if (tag === undefined) {
    const base = `sale:${bucket.saleId}:${bucket.index}`;
    const low = Math.floor((bucket.index * CLUSTER_SLOTS) / bucket.count);
    const high = Math.floor(((bucket.index + 1) * CLUSTER_SLOTS) / bucket.count);
    tag = base;
    for (let n = 1; n < 10_000; n++) {
      const slot = calculateSlot(tag);
      if (slot >= low && slot < high) break;
      tag = `${base}.${n}`;
    }
    if (bucketTags.size > 100_000) bucketTags.clear();
    bucketTags.set(cacheKey, tag);
  }
  return tag;
}

/**
 * Every Redis key of one bucket of a sale, built in this one place. All of them share the bucket's hash
 * tag (`{sale:<id>}` for a sale with one bucket), so every script touches a single Redis Cluster slot;
 * scripts receive them in KEYS and never build a key themselves.
 */
export class SaleKeys {
  readonly meta: string;
  readonly stock: string;
  readonly buyers: string;
  readonly reservations: string;
  readonly replays: string;
  readonly returned: string;
  readonly grants: string;
  /** Hash returnKey -> "units|epoch": units this bucket gave back to MySQL (give-back-4.lua). */
  readonly givebacks: string;
  /**
   * Stream: the reservations the workers have not written yet (the hand-off). The reservation script
   * appends to it; the workers read it through the consumer group `HANDOFF_GROUP`, and delete what
   * they wrote, so its length is the sale's unwritten backlog.
   */
  readonly handoff: string;
  /** The sale's purchase rate-limit counter (a fixed window: INCR with a TTL). */
  readonly purchaseRateLimit: string;
  /** The redis-lock strategies' purchase lock: its holder's owner value, with a TTL (lock-acquire-3.lua). */
  readonly lock: string;
  /** The last fencing token the sale's lock granted: a counter without TTL. */
  readonly lockFence: string;
  /** The demonstration's paused lock holder, armed for the lock's next grant (with a TTL; SaleLocks.armPause). */
  readonly lockPause: string;
  /**
   * Marker the durable acknowledgement writes on this bucket's master just before its `WAIT` (ReplicaAcks,
   * on a Redis Cluster): a write of its own connection that comes after the reservations it confirms.
   */
  readonly replicaAck: string;
  private readonly base: string;

  constructor(
    prefix: string,
    readonly bucket: SaleBucket,
  ) {
    this.base = `${prefix}:{${bucketTag(bucket)}}`;
    this.meta = `${this.base}:meta`;
    this.stock = `${this.base}:stock`;
    this.buyers = `${this.base}:buyers`;
    this.reservations = `${this.base}:reservations`;
    this.replays = `${this.base}:replays`;
    this.returned = `${this.base}:returned`;
    this.grants = `${this.base}:grants`;
    this.givebacks = `${this.base}:givebacks`;
    this.handoff = `${this.base}:handoff`;
    this.purchaseRateLimit = `${this.base}:rl:purchase-sale`;
    this.lock = `${this.base}:lock`;
    this.lockFence = `${this.base}:lock-fence`;
    this.lockPause = `${this.base}:lock-pause`;
    this.replicaAck = `${this.base}:replica-ack`;
  }

  /** One buyer's purchase rate-limit counter in this sale. */
  purchaseRateLimitOf(userId: string): string {
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
      this.givebacks,
      this.handoff,
      this.replicaAck,
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
   * Marker written by the durable-acknowledgement connection just before its `WAIT` (ReplicaAcks): a
   * write of that connection's own that comes after every reservation it confirms.
   */
  readonly replicaAckMarker: string;

  private readonly bucketKeys = new Map<string, SaleKeys>();

  constructor(readonly prefix: string) {
    this.replicaAckMarker = `${prefix}:replica-ack`;
    this.reconciliation = `${prefix}:reconciliation`;
    this.activeSales = `${prefix}:active-sales`;
    this.stockReturnedChannel = `${prefix}:stock-returned`;
  }

  /**
   * String "<epoch>:<owner>" with a TTL: a process is opening incarnation `epoch` of the sale and loading
   * it into every bucket (SaleIncarnations). On the slot of the sale's single-bucket tag, so for a sale
   * with one bucket it lives and dies with the sale's own keys.
   */
  incarnationLoading(saleId: string): string {
    return `${this.prefix}:{sale:${saleId}}:loading`;
  }

  /** The keys of a sale with one bucket (and of the MySQL-only strategies' locks and counters). */
  sale(saleId: string): SaleKeys {
    return this.bucket(onlyBucket(saleId));
  }

  /** One bucket's keys, built once per bucket: every purchase asks for them. */
  bucket(bucket: SaleBucket): SaleKeys {
    const cacheKey = `${bucket.saleId}/${bucket.index}/${bucket.count}`;
    let keys = this.bucketKeys.get(cacheKey);
    if (keys === undefined) {
      keys = new SaleKeys(this.prefix, bucket);
      if (this.bucketKeys.size > MAX_CACHED_BUCKETS) this.bucketKeys.clear();
      this.bucketKeys.set(cacheKey, keys);
    }
    return keys;
  }

  /**
   * A sale's waiting room (room-*.lua): meta, queue, shopping, admitted, polls. Their own hash tag
   * `{room:<id>}`: one cluster slot, apart from the slots that sell the sale's stock.
   */
  room(saleId: string): [string, string, string, string, string] {
    const base = `${this.prefix}:{room:${saleId}}`;
    return [`${base}:meta`, `${base}:queue`, `${base}:shopping`, `${base}:admitted`, `${base}:polls`];
  }

  /**
   * Marker the durable acknowledgement writes on the master of a sale's waiting room just before its
   * `WAIT` (ReplicaAcks, on a Redis Cluster): on the room's slot, after the places and passes it confirms.
   */
  roomReplicaAck(saleId: string): string {
    return `${this.prefix}:{room:${saleId}}:replica-ack`;
  }

  /** The key prefix of one rate limit's counters (one key per subject under it). */
  rateLimit(name: string): string {
    return `${this.prefix}:rl:${name}`;
  }
}
