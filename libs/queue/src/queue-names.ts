/** Every BullMQ queue of the product. The api produces, the worker consumes. */
export enum QueueName {
  /** `create-order`: the hot path, drained with group commit. */
  Orders = 'orders',
  /** The scheduled maintenance jobs (expiry sweep, recovery, reconciliation); kept apart so they never wait behind a burst. */
  OrderLifecycle = 'order-lifecycle',
}
