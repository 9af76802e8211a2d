/** Every BullMQ queue of the product. The api produces, the worker consumes. */
export enum QueueName {
  Orders = 'orders',
}
