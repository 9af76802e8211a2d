import { type AppConfig, type DurableAck as DurableAckMode, InjectAppConfig } from '@flash-sale/config';
import { ErrorCode, errorMessage, RetryLaterError } from '@flash-sale/domain';
import { ReplicaAcks, type WrittenTo } from '@flash-sale/redis';
import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';

/** What a buyer is told to wait before sending the same token, or polling, again. */
const RETRY_SECONDS = 1;
/** DURABLE_ACK=auto: how soon to look for replicas again when Redis could not be asked at startup. */
const DETECT_AGAIN_MS = 5_000;
/**
 * How long one missed WAIT refuses its master's purchases (and rooms) at once. Then the next one waits for
 * a replica itself: the refusal saves buyers the timeout, and must never outlast a replica that came back
 * while its probe was held up (a probe's connection a partition left silent waits out its own deadline).
 */
const REFUSE_FOR_MS = 1_000;
/** DURABLE_ACK=auto: how long a master found without any replica is acknowledged for without a WAIT. */
const NO_REPLICA_RECHECK_MS = 5_000;

/** 503 + retry-after for a write no replica confirmed: it exists, and the same request finds it again. */
function notConfirmed(writtenTo: WrittenTo): RetryLaterError {
  return new RetryLaterError(
    ErrorCode.Unavailable,
    'roomOf' in writtenTo
      ? 'Your place in the waiting room is not confirmed yet; try again'
      : 'Your purchase is not confirmed yet; retry with the same token',
    RETRY_SECONDS,
  );
}

/**
 * DURABLE_ACK=replica (docs/failure-model.md): a 202 is sent only once a replica holds the reservation,
 * and a waiting room's answer that gave a buyer a new place or pass only once a replica holds it (a
 * failover must not forget a pass, or the room would admit more shoppers than its cap or the units).
 * DURABLE_ACK=auto, the default, is `replica` when every Redis master has a replica as the API starts,
 * and `off` otherwise (a single Redis, as `npm start` runs it): wherever a copy that survives a master's
 * loss exists, a 202 waits for it.
 * The WAIT runs on a connection of its own, batched (libs/redis replica-acks.ts), so a missing replica
 * slows only the answers that wait, never token issuance, sold-out answers or anything else.
 *
 * Once a WAIT has timed out, that master's replica is known to be missing: later purchases whose bucket
 * that master holds (and joins and polls of the rooms it holds) are refused at once with 503 +
 * retry-after before anything is done ("nothing happened"), rather than each reserving and then waiting
 * out the timeout. Per master: in a cluster, one
 * master's missing replica says nothing of the others', whose buyers go on buying. While refusing, one
 * probe (a WAIT of its own) per timeout tells when the replica is back; a probe the master cannot answer
 * (it failed over, its slots moved) ends the refusal, and so does REFUSE_FOR_MS: the next purchase finds
 * out afresh.
 */
@Injectable()
export class DurableAck implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(DurableAck.name);
  /** A purchase or a room's answer waits for `confirm` (DURABLE_ACK=replica, or auto with replicas). */
  enabled: boolean;
  private readonly mode: DurableAckMode;
  private detectTimer: NodeJS.Timeout | undefined;
  private readonly timeoutMs: number;
  /**
   * The masters (ReplicaAcks.nodeKeyOf) whose replica last missed a WAIT: a bucket or room each holds (what a
   * probe confirms) and when their refusal ends.
   */
  private readonly missing = new Map<string, { writtenTo: WrittenTo; until: number }>();
  private readonly probing = new Set<string>();
  /** DURABLE_ACK=auto: masters that had no replica at all when a WAIT missed, until when that holds. */
  private readonly withoutReplica = new Map<string, number>();

  constructor(
    private readonly replicaAcks: ReplicaAcks,
    @InjectAppConfig() config: AppConfig,
  ) {
    this.mode = config.purchase.durableAck;
    this.enabled = this.mode === 'replica';
    this.timeoutMs = config.purchase.durableAckTimeoutMs;
  }

  async onModuleInit(): Promise<void> {
    if (this.mode === 'auto') await this.detectReplicas();
  }

  onModuleDestroy(): void {
    clearTimeout(this.detectTimer);
    this.replicaAcks.close();
  }

  /** DURABLE_ACK=auto: on when every master has a replica; asked again later if Redis cannot answer now. */
  private async detectReplicas(): Promise<void> {
    try {
      this.enabled = await this.replicaAcks.everyMasterHasReplica();
    } catch (error) {
      this.logger.warn(
        `DURABLE_ACK=auto: Redis cannot say whether it has replicas (${errorMessage(error)}); asking again`,
      );
      this.detectTimer = setTimeout(() => void this.detectReplicas(), DETECT_AGAIN_MS);
      this.detectTimer.unref();
      return;
    }
    this.logger.log(
      this.enabled
        ? 'DURABLE_ACK=auto: every Redis master has a replica, so a 202 waits until one holds the reservation'
        : 'DURABLE_ACK=auto: not every Redis master has a replica, so a 202 does not wait for one (off)',
    );
  }

  /**
   * Throws 503 + retry-after while the last WAIT on the master of the purchase's bucket (or the room) found
   * no replica: nothing has been done yet. Worked out only while some master is refused (the purchase
   * path pays nothing).
   */
  admit(writtenToOf: () => WrittenTo): void {
    if (!this.enabled || this.missing.size === 0) return;
    const writtenTo = writtenToOf();
    const master = this.masterOf(writtenTo);
    const refusal = master === undefined ? undefined : this.missing.get(master);
    if (master === undefined || !refusal) return;
    if (Date.now() >= refusal.until) {
      // This purchase waits for a replica itself, and tells again.
      this.missing.delete(master);
      return;
    }
    this.probe(master);
    throw new RetryLaterError(
      ErrorCode.Unavailable,
      'roomOf' in writtenTo
        ? 'No replica can confirm the waiting room right now; nothing was done: try again'
        : 'No replica can confirm purchases right now; nothing was done: retry with the same token',
      RETRY_SECONDS,
    );
  }

  /**
   * The master a write to `writtenTo` goes to, as this process's slot map says now (undefined when the
   * acknowledgement is off, or the map is not known): taken just before the write is sent, for `confirm`.
   */
  masterNow(writtenTo: WrittenTo): string | undefined {
    return this.enabled ? this.masterOf(writtenTo) : undefined;
  }

  /**
   * Waits until a replica holds every write answered so far (the caller's reservation, place or pass
   * included). A timeout is a 503 with retry-after: the write exists, and the same token replays it (the
   * same join or poll answers the same place or pass). The purchase path calls it only when `enabled`:
   * otherwise it would wait a turn for nothing.
   *
   * `writtenOn`: masterNow(writtenTo) as the write was sent. If the slot map names another master now (a
   * failover seen meanwhile, or the write redirected), the write may have been made on a master cut off in
   * a minority, whose writes the cluster discards: waiting on the new master would confirm nothing of it,
   * and a new master with no replica yet would not even wait. So it is not confirmed — 503, and the same
   * token (or the next join or poll) finds out on the master there is now.
   */
  async confirm(writtenTo: WrittenTo, writtenOn?: string): Promise<void> {
    if (!this.enabled) return;
    if (writtenOn !== undefined && this.masterOf(writtenTo) !== writtenOn) throw notConfirmed(writtenTo);
    if (this.withoutReplica.size > 0) {
      const master = this.masterOf(writtenTo);
      if (master !== undefined && (this.withoutReplica.get(master) ?? 0) > Date.now()) return;
    }
    if ((await this.replicaAcks.confirm(1, this.timeoutMs, writtenTo)) >= 1) {
      if (this.missing.size > 0) {
        const master = this.masterOf(writtenTo);
        if (master !== undefined) this.missing.delete(master);
      }
      return;
    }
    const master = this.masterOf(writtenTo);
    if (master !== undefined && (await this.hasNoReplicaToWaitFor(master, writtenTo))) return;
    if (master !== undefined) this.noteMissing(master, writtenTo);
    throw notConfirmed(writtenTo);
  }

  /**
   * DURABLE_ACK=auto follows the replicas there are: a master with none at all (its replica removed, or
   * gone long enough for the master to drop it) has no copy a failover could promote, so waiting would
   * protect nothing — its purchases are acknowledged as `off` would, and asked again after
   * NO_REPLICA_RECHECK_MS. A replica still attached but behind is waited for (it could be promoted).
   * DURABLE_ACK=replica refuses instead: that is what it was asked for.
   */
  private async hasNoReplicaToWaitFor(master: string, writtenTo: WrittenTo): Promise<boolean> {
    if (this.mode !== 'auto') return false;
    const replicas = await this.replicaAcks.replicasOf(writtenTo).catch(() => undefined);
    if (replicas !== 0) return false;
    if (!this.withoutReplica.has(master)) {
      this.logger.warn(`DURABLE_ACK=auto: Redis ${master} has no replica now, so its purchases do not wait for one`);
    }
    this.withoutReplica.set(master, Date.now() + NO_REPLICA_RECHECK_MS);
    this.missing.delete(master);
    return true;
  }

  /** The master whose replica confirms `writtenTo`'s writes; undefined while the slot map is not known. */
  private masterOf(writtenTo: WrittenTo): string | undefined {
    try {
      return this.replicaAcks.nodeKeyOf(writtenTo);
    } catch {
      return undefined;
    }
  }

  private noteMissing(master: string, writtenTo: WrittenTo): void {
    if (!this.missing.has(master)) {
      this.logger.warn(
        `No replica of Redis ${master} confirmed a write: refusing its buckets' purchases and rooms until one does`,
      );
    }
    this.missing.set(master, { writtenTo, until: Date.now() + REFUSE_FOR_MS });
  }

  private probe(master: string): void {
    const writtenTo = this.missing.get(master)?.writtenTo;
    if (!writtenTo || this.probing.has(master)) return;
    this.probing.add(master);
    this.replicaAcks
      .confirm(1, this.timeoutMs, writtenTo)
      .then((confirmed) => {
        if (confirmed >= 1 && this.missing.delete(master)) {
          this.logger.log(`A replica of Redis ${master} confirms again: admitting its buckets' purchases and rooms`);
        }
      })
      // It cannot answer (down, failed over, its slots moved): the refusal ends, and the next purchase's
      // own WAIT, wherever its bucket or room is now, tells again.
      .catch(() => this.missing.delete(master))
      .finally(() => this.probing.delete(master));
  }
}
