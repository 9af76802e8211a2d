import { Module } from '@nestjs/common';
import { DurableAck } from './durable-ack';

/**
 * The durable acknowledgement (DURABLE_ACK, docs/failure-model.md): one per process, shared by the purchase
 * path and the waiting rooms, so that a master found without a replica is refused for both at once.
 */
@Module({
  providers: [DurableAck],
  exports: [DurableAck],
})
export class DurabilityModule {}
