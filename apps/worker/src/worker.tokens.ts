export { REDIS_CLIENT } from '@flash-sale/redis';
export { QUEUE_CONNECTION as BULL_CONNECTION } from '@flash-sale/queue';
/** The worker's section of the app config (concurrency, group commit, retries). */
export const WORKER_CONFIG = Symbol('WORKER_CONFIG');
export const QUEUE_PREFIX = Symbol('QUEUE_PREFIX');
/** Producer handles: the worker upserts the lifecycle job schedulers and, sweeping, nudges write-orders jobs. */
export const LIFECYCLE_QUEUE = Symbol('LIFECYCLE_QUEUE');
export const ORDERS_QUEUE = Symbol('ORDERS_QUEUE');
export const LIFECYCLE_CONFIG = Symbol('LIFECYCLE_CONFIG');
