/** Injection tokens for infrastructure that has no class of its own to inject by. */
export const APP_CONFIG = Symbol('APP_CONFIG');
export const REDIS_CLIENT = Symbol('REDIS_CLIENT');
export const BULL_CONNECTION = Symbol('BULL_CONNECTION');
