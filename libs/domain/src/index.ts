export * from './error-code';
export * from './sale';
export * from './order';
export * from './order-number';
export * from './audit';
export * from './books';
export * from './purchase-rules';
export * from './error-message';
