import { Module } from '@nestjs/common';
import { WorkerOpsModule } from '../ops/worker-ops.module';
import { HandoffDrain } from './handoff-drain';
import { OrderWriter } from './order-writer';
import { WritePathWarmUp } from './write-path-warm-up';
import { WriteOrdersProcessor } from './write-orders.processor';

/** Writing orders: the `orders` queue's processor, the hand-off drain and the group-commit writer. */
@Module({
  imports: [WorkerOpsModule],
  providers: [OrderWriter, HandoffDrain, WriteOrdersProcessor, WritePathWarmUp],
  exports: [WritePathWarmUp],
})
export class OrdersModule {}
