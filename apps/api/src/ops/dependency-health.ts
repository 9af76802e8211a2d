import type { RedisClient } from '@flash-sale/redis';
import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { HealthIndicatorService } from '@nestjs/terminus';
import type { Queue } from 'bullmq';
import { REDIS_CLIENT } from '../infra/tokens';
import { errorMessage, withDeadline } from './deadline';
import { registeredQueues } from './registered-queues';

/** How long a readiness probe waits for each dependency. */
export const CHECK_DEADLINE_MS = 1_000;

/** Terminus indicators for what terminus has no built-in for: Redis and the BullMQ queues. */
@Injectable()
export class DependencyHealth implements OnModuleInit {
  private queues: Queue[] = [];

  constructor(
    private readonly indicators: HealthIndicatorService,
    @Inject(REDIS_CLIENT) private readonly redis: RedisClient,
    private readonly moduleRef: ModuleRef,
  ) {}

  onModuleInit(): void {
    this.queues = registeredQueues(this.moduleRef);
  }

  /** The client the purchase path uses answers PING. */
  async redisPing(key: string) {
    const check = this.indicators.check(key);
    try {
      await withDeadline(this.redis.ping(), CHECK_DEADLINE_MS, 'Redis');
      return check.up();
    } catch (error) {
      return check.down({ message: errorMessage(error) });
    }
  }

  /** Every queue the API produces to can be read through its own connection. */
  async queuesReachable(key: string) {
    const check = this.indicators.check(key);
    try {
      const depths = await Promise.all(
        this.queues.map(async (queue) => {
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
