import { Module } from '@nestjs/common';
import { LoadShedder } from './load-shedder';
import { PurchaseRateLimits } from './purchase-rate-limits';
import { RateLimitInterceptor } from './rate-limit.interceptor';
import { RateLimits } from './rate-limits';

/**
 * Protection at the door (docs/protection.md): rate limits and load shedding. A module whose
 * controllers put `@RateLimit(profile)` on a route imports this one.
 */
@Module({
  providers: [RateLimits, PurchaseRateLimits, LoadShedder, RateLimitInterceptor],
  exports: [RateLimits, RateLimitInterceptor, LoadShedder, PurchaseRateLimits],
})
export class ProtectionModule {}
