import { errorMessage } from '@flash-sale/domain';
import { RedisConnection } from '@flash-sale/redis';
import { Injectable } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import { withDeadline } from '../common/deadline';
import { ProductQueues } from '@flash-sale/queue';

/** How long a readiness probe waits for each dependency. */
export const CHECK_DEADLINE_MS = 1_000;

/** Terminus indicators for what terminus has no built-in for: Redis and the BullMQ queues. */
@Injectable()
export class DependencyHealth {
  constructor(
    private readonly indicators: HealthIndicatorService,
    private readonly redis: RedisConnection,
    private readonly queues: ProductQueues,
  ) {}

  /**
   * The client the purchase path uses answers PING and, in a cluster, reaches every master the rest of
   * the cluster reaches: an API cut off from one master cannot sell the sales whose slots it serves, and
   * the load balancer should send their buyers to an API that can (RedisConnection.mastersCutOff). The
   * report names Redis's persistence, since a Redis without an append-only file loses the unwritten
   * `202`s when it dies.
   */
  async redisPing(key: string) {
    const check = this.indicators.check(key);
    try {
      // First: the PING below goes to one master of a cluster, maybe the one cut off, and would say less.
      const cutOff = await this.redis.mastersCutOff(CHECK_DEADLINE_MS);
      if (cutOff.length > 0) {
        return check.down({ message: `No answer from Redis master ${cutOff.join(', ')}, which the cluster reaches` });
      }
      await withDeadline(this.redis.ping(), CHECK_DEADLINE_MS, 'Redis');
      const persistence = await withDeadline(this.redis.persistence(), CHECK_DEADLINE_MS, 'Redis');
      return check.up(
        persistence === 'aof'
          ? { persistence }
          : { persistence, warning: 'No append-only file: a Redis crash loses the purchases not yet written to MySQL' },
      );
    } catch (error) {
      return check.down({ message: errorMessage(error) });
    }
  }

  /** Down while the startup warm-up runs (startup-warm-up.ts): the process is not ready for a crowd yet. */
  warmedUp(key: string, done: boolean) {
    const check = this.indicators.check(key);
    return done ? check.up() : check.down({ message: 'warming up the purchase path' });
  }

  /** Every queue the API produces to can be read through its own connection. */
  async queuesReachable(key: string) {
    const check = this.indicators.check(key);
    try {
      const depths = await Promise.all(
        this.queues.all.map(async (queue) => {
          const counts = await withDeadline(queue.getJobCounts('waiting', 'active'), CHECK_DEADLINE_MS, queue.name);
          return [queue.name, counts] as const;
        }),
      );
      return check.up(Object.fromEntries(depths));
    } catch (error) {
      return check.down({ message: errorMessage(error) });
    }
  }
}
