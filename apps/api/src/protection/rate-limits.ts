import { errorMessage } from '@flash-sale/domain';
import { type AppConfig, InjectAppConfig, type RateLimit } from '@flash-sale/config';
import { RateLimiterStore } from '@flash-sale/redis';
import { Injectable, Logger } from '@nestjs/common';
import { type RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { rateLimited } from './retry-later.error';

/**
 * The named limits. Each is keyed by one subject: `ip` limits are lifted for RATE_LIMIT_TRUSTED_IPS
 * (a load generator's address), `user` limits never are. (The purchase route's per-user and per-sale
 * limits are purchase-rate-limits.ts: one Redis round trip for both.)
 */
export const LIMIT_PROFILES = {
  'guest-sign-in': { subject: 'ip' },
  /** Registration and name + password sign-in: password guessing. */
  'account-sign-in': { subject: 'ip' },
  'admin-sign-in': { subject: 'ip' },
  /** Wrong admin passwords from one IP: when spent, that IP — and only that IP — is locked out. */
  'admin-failures': { subject: 'ip' },
  'submit-token': { subject: 'user' },
  'queue-join': { subject: 'user' },
} as const;

export type LimitProfile = keyof typeof LIMIT_PROFILES;

function limitOf(profile: LimitProfile, config: AppConfig): RateLimit & { blockSeconds?: number } {
  const limits = config.protection.limits;
  switch (profile) {
    case 'guest-sign-in':
      return limits.guestSignInPerIp;
    case 'account-sign-in':
      return limits.accountSignInPerIp;
    case 'admin-sign-in':
      return limits.adminSignInPerIp;
    case 'admin-failures':
      return {
        points: limits.adminFailuresBeforeLockout,
        durationSeconds: limits.adminLockoutSeconds,
        blockSeconds: limits.adminLockoutSeconds,
      };
    case 'submit-token':
      return limits.submitTokensPerUser;
    case 'queue-join':
      return limits.queueJoinsPerUser;
  }
}

/**
 * Distributed, atomic rate limits (rate-limiter-flexible on the shared Redis, built by
 * RateLimiterStore): every API instance counts into the same window and a check costs one Redis
 * command. While Redis is unreachable each limit counts in process (purchases then go through MySQL
 * and must be neither unlimited nor refused because the limiter's store is down).
 */
@Injectable()
export class RateLimits {
  private readonly logger = new Logger(RateLimits.name);
  private readonly limiters: Record<LimitProfile, RateLimiterRedis>;
  private readonly trustedIps: ReadonlySet<string>;

  constructor(@InjectAppConfig() config: AppConfig, store: RateLimiterStore) {
    this.trustedIps = new Set(config.protection.trustedIps);
    const entries = (Object.keys(LIMIT_PROFILES) as LimitProfile[]).map((profile) => {
      const { points, durationSeconds, blockSeconds } = limitOf(profile, config);
      const limiter = store.limiter({ name: profile, points, durationSeconds, blockSeconds: blockSeconds ?? 0 });
      return [profile, limiter] as const;
    });
    this.limiters = Object.fromEntries(entries) as Record<LimitProfile, RateLimiterRedis>;
  }

  isTrusted(ip: string): boolean {
    return this.trustedIps.has(ip);
  }

  /** Spends one point of `subject`'s budget, or throws `429 RATE_LIMITED` with the wait. */
  async consume(profile: LimitProfile, subject: string): Promise<void> {
    if (LIMIT_PROFILES[profile].subject === 'ip' && this.trustedIps.has(subject)) return;
    try {
      await this.limiters[profile].consume(subject);
    } catch (outcome) {
      if (outcome instanceof RateLimiterRes) throw rateLimited(outcome.msBeforeNext);
      // Neither Redis nor the in-process insurance answered: let the request through rather than
      // refuse an honest buyer for an infrastructure fault (the purchase path has its own answer).
      this.logger.warn(`Rate limit "${profile}" unavailable: ${errorMessage(outcome)}`);
    }
  }

  /** Throws `429` if `subject` has no point left (spends nothing): a lockout check. */
  async ensureNotBlocked(profile: LimitProfile, subject: string): Promise<void> {
    if (LIMIT_PROFILES[profile].subject === 'ip' && this.trustedIps.has(subject)) return;
    const limiter = this.limiters[profile];
    let state: RateLimiterRes | null;
    try {
      state = await limiter.get(subject);
    } catch (error) {
      this.logger.warn(`Rate limit "${profile}" unreadable: ${errorMessage(error)}`);
      return;
    }
    if (state && state.consumedPoints >= limiter.points) throw rateLimited(state.msBeforeNext);
  }

  async reset(profile: LimitProfile, subject: string): Promise<void> {
    await this.limiters[profile].delete(subject).catch(() => false);
  }
}
