/** The worker's section of the app config (concurrency, group commit, retries). */
export const WORKER_CONFIG = Symbol('WORKER_CONFIG');
/** The Redis connection BullMQ uses (blocking commands need `maxRetriesPerRequest: null`). */
export const BULL_CONNECTION = Symbol('BULL_CONNECTION');
export const QUEUE_PREFIX = Symbol('QUEUE_PREFIX');
export const REDIS_CLIENT = Symbol('REDIS_CLIENT');
/** Producer handles: the worker upserts the lifecycle job schedulers and, sweeping, nudges write-orders jobs. */
export const LIFECYCLE_QUEUE = Symbol('LIFECYCLE_QUEUE');
export const ORDERS_QUEUE = Symbol('ORDERS_QUEUE');
export const LIFECYCLE_CONFIG = Symbol('LIFECYCLE_CONFIG');
