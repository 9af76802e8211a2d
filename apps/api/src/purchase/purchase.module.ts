import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { MetricsModule } from '../metrics/metrics.module';
import { ProtectionModule } from '../protection/protection.module';
import { SalesModule } from '../sales/sales.module';
import { WaitingRoomModule } from '../waiting-room/waiting-room.module';
import { DbPurchase } from './db-purchase';
import { DurableAck } from './durable-ack';
import { IncarnationGuard } from './incarnation-guard';
import { LockHolderPause } from './lock-holder-pause';
import { PurchaseLock } from './purchase-lock';
import { PurchaseRoute } from './purchase.route';
import { RedisDownFallback } from './redis-down-fallback';
import { RedisReservation } from './redis-reservation';
import { ReservationFollowUp } from './reservation-follow-up';
import { PurchaseService } from './purchase.service';
import { RedisBuyers } from './redis-buyers';
import { SoldOutFastPath } from './sold-out-fast-path';
import { SoldOutGate } from './sold-out-gate';
import { SubmitTokens } from './submit-tokens';
import { SubmitTokensController } from './submit-tokens.controller';
import { WriteOrdersNudge } from './write-orders-nudge';

/**
 * The purchase path: submit tokens, the purchase route, the reservation (or the Redis-down fallback,
 * or a MySQL strategy), the nudge of the sale's order writer, and the local sold-out flag.
 */
@Module({
  imports: [AuthModule, MetricsModule, ProtectionModule, SalesModule, WaitingRoomModule],
  controllers: [SubmitTokensController],
  providers: [
    PurchaseRoute,
    PurchaseService,
    RedisReservation,
    ReservationFollowUp,
    RedisDownFallback,
    SubmitTokens,
    RedisBuyers,
    DbPurchase,
    PurchaseLock,
    LockHolderPause,
    IncarnationGuard,
    DurableAck,
    SoldOutGate,
    SoldOutFastPath,
    WriteOrdersNudge,
  ],
  // The demonstration arms the paused lock holder (demo/demo-runs.service.ts, demo/lock-holder-pause.controller.ts).
  exports: [LockHolderPause],
})
export class PurchaseModule {}
