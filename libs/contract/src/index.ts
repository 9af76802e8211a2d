/**
 * The HTTP contract of docs/api.md as types and constants, for the API (its DTOs implement these), the
 * storefront, the k6 load tests and the tests.
 *
 * Every file here is dependency-free, and imports its siblings for types only: k6 and the browser load
 * these sources as they are, one file at a time, by relative path.
 */
export * from './error-code';
export * from './request';
export * from './sale';
export * from './order';
export * from './auth';
export * from './purchase';
export * from './audit';
export * from './demo-run';
export * from './waiting-room';
