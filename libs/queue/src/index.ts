export * from './queue-names';
export * from './create-order.job';
export * from './order-lifecycle.jobs';
