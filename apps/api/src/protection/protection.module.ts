import { Global, Module } from '@nestjs/common';
import { OpsModule } from '../ops/ops.module';
import { LoadShedder } from './load-shedder';
import { PurchaseAdmission } from './purchase-admission';
import { PurchaseRateLimit } from './purchase-rate-limit';
import { RateLimitInterceptor } from './rate-limit.interceptor';
import { RateLimits } from './rate-limits';

/**
 * Protection at the door (docs/protection.md): rate limits, load shedding. Global, so that any
 * controller can put `@RateLimit(profile)` on a route.
 */
@Global()
@Module({
  imports: [OpsModule],
  providers: [RateLimits, PurchaseRateLimit, LoadShedder, PurchaseAdmission, RateLimitInterceptor],
  exports: [RateLimits, RateLimitInterceptor, LoadShedder, PurchaseRateLimit],
})
export class ProtectionModule {}
