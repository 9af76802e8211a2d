export * from './lease-policy';
export * from './stock-leases';
export type { LoadOutcome } from './sale-incarnations';
export * from './order-lifecycle';
export * from './stock.module';
export { singleFlight } from './in-flight';
