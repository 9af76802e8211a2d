import { Module } from '@nestjs/common';
import { LoadShedder } from './load-shedder';
import { PurchaseLimitsPolicy } from './purchase-limits';
import { RateLimitInterceptor } from './rate-limit.interceptor';
import { RateLimits } from './rate-limits';

/**
 * Protection at the door (docs/protection.md): rate limits and load shedding. A module whose
 * controllers put `@RateLimit(profile)` on a route imports this one.
 */
@Module({
  providers: [RateLimits, PurchaseLimitsPolicy, LoadShedder, RateLimitInterceptor],
  exports: [RateLimits, RateLimitInterceptor, LoadShedder, PurchaseLimitsPolicy],
})
export class ProtectionModule {}
