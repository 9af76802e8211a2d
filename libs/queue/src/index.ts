export * from './queue-names';
export * from './create-order.job';
