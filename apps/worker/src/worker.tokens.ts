/** The worker's section of the app config (concurrency, group commit, retries). */
export const WORKER_CONFIG = Symbol('WORKER_CONFIG');
