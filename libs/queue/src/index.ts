export * from './queue-names';
export * from './write-orders.job';
export * from './create-order.job';
export * from './order-lifecycle.jobs';
export * from './product-queues';
export * from './queue.module';
