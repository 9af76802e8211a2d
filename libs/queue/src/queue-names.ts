/** Every BullMQ queue of the product. The api produces, the worker consumes. */
export enum QueueName {
  /** `write-orders`: one job per sale with a hand-off backlog; it writes the backlog in batches. */
  Orders = 'orders',
  /** The scheduled maintenance jobs (expiry sweep, recovery, reconciliation); kept apart so they never wait behind a burst. */
  OrderLifecycle = 'order-lifecycle',
}
