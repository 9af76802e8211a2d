export * from './redis-client';
export * from './sale-keys';
export * from './reservation-record';
export * from './reservation-scripts';
export * from './sale-redis.repository';
export * from './sale-activity';
export * from './handoff-stream';
export * from './stock-return-subscription';
