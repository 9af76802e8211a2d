import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { DurabilityModule } from '../durability/durability.module';
import { MetricsModule } from '../metrics/metrics.module';
import { ProtectionModule } from '../protection/protection.module';
import { SalesModule } from '../sales/sales.module';
import { RoomRecord } from './room-record';
import { RoomStock } from './room-stock';
import { WaitingRoomPollRoute } from './waiting-room-poll.route';
import { AdminWaitingRoomController, WaitingRoomController } from './waiting-room.controller';
import { WaitingRoom } from './waiting-room.service';

/** Sales' waiting rooms: joins, polls, the admin's view, and the admission the token route checks. */
@Module({
  imports: [AuthModule, DurabilityModule, MetricsModule, ProtectionModule, SalesModule],
  controllers: [WaitingRoomController, AdminWaitingRoomController],
  providers: [WaitingRoom, RoomStock, RoomRecord, WaitingRoomPollRoute],
  exports: [WaitingRoom],
})
export class WaitingRoomModule {}
