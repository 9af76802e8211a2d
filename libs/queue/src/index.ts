export * from './queue-names';
export * from './write-orders.job';
export * from './order-lifecycle.jobs';
export * from './job-handlers';
export * from './product-queues';
export * from './queue.module';
export * from './supervised-worker';
