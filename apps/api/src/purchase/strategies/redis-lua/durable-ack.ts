import { type AppConfig, type DurableAck as DurableAckMode, InjectAppConfig } from '@flash-sale/config';
import { ErrorCode, errorMessage, RetryLaterError } from '@flash-sale/domain';
import { ReplicaAcks, type SaleBucket } from '@flash-sale/redis';
import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';

/** What a buyer is told to wait before sending the same token again. */
const RETRY_SECONDS = 1;
/** DURABLE_ACK=auto: how soon to look for replicas again when Redis could not be asked at startup. */
const DETECT_AGAIN_MS = 5_000;

/**
 * DURABLE_ACK=replica (docs/failure-model.md): a 202 is sent only once a replica holds the reservation.
 * DURABLE_ACK=auto, the default, is `replica` when every Redis master has a replica as the API starts,
 * and `off` otherwise (a single Redis, as `npm start` runs it): wherever a copy that survives a master's
 * loss exists, a 202 waits for it.
 * The WAIT runs on a connection of its own, batched (libs/redis replica-acks.ts), so a missing replica
 * slows only the purchases that wait, never token issuance, sold-out answers or anything else.
 *
 * Once a WAIT has timed out, the replica is known to be missing: later purchases are refused at once with
 * 503 + retry-after before anything is reserved ("nothing happened"), rather than each reserving and then
 * waiting out the timeout. While refusing, one probe (a WAIT of its own) per timeout tells when the
 * replica is back.
 */
@Injectable()
export class DurableAck implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(DurableAck.name);
  /** A purchase waits for `confirm` before its 202 (DURABLE_ACK=replica, or auto with replicas). */
  enabled: boolean;
  private readonly mode: DurableAckMode;
  private detectTimer: NodeJS.Timeout | undefined;
  private readonly timeoutMs: number;
  private replicaMissing = false;
  private probing = false;
  /** The bucket of the last confirmation asked for: what a probe confirms (a cluster needs one). */
  private lastBucket: SaleBucket | undefined;

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

  /** Throws 503 + retry-after while the last WAIT found no replica: nothing has been done yet. */
  admit(): void {
    if (!this.enabled || !this.replicaMissing) return;
    this.probe();
    throw new RetryLaterError(
      ErrorCode.Unavailable,
      'No replica can confirm purchases right now; nothing was done: retry with the same token',
      RETRY_SECONDS,
    );
  }

  /**
   * Waits until a replica holds every write answered so far (the caller's reservation included). A
   * timeout is a 503 with retry-after: the reservation exists, and the same token replays it. The
   * purchase path calls it only when `enabled`: otherwise it would wait a turn for nothing.
   */
  async confirm(bucket: SaleBucket): Promise<void> {
    if (!this.enabled) return;
    this.lastBucket = bucket;
    if ((await this.replicaAcks.confirm(1, this.timeoutMs, bucket)) >= 1) {
      this.replicaMissing = false;
      return;
    }
    this.noteMissing();
    throw new RetryLaterError(
      ErrorCode.Unavailable,
      'Your purchase is not confirmed yet; retry with the same token',
      RETRY_SECONDS,
    );
  }

  private noteMissing(): void {
    if (!this.replicaMissing) this.logger.warn('No replica confirmed a purchase: refusing purchases until one does');
    this.replicaMissing = true;
  }

  private probe(): void {
    if (this.probing) return;
    this.probing = true;
    this.replicaAcks
      .confirm(1, this.timeoutMs, this.lastBucket)
      .then((confirmed) => {
        if (confirmed >= 1 && this.replicaMissing) {
          this.logger.log('A replica confirms again: admitting purchases');
          this.replicaMissing = false;
        }
      })
      .catch(() => undefined) // Redis itself is down: the purchase path has its own answer for that
      .finally(() => (this.probing = false));
  }
}
