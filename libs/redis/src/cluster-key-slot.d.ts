declare module 'cluster-key-slot' {
  /** The Redis Cluster hash slot (0..16383) of a key, honouring a `{hash tag}` as Redis does. */
  function calculateSlot(key: string): number;
  export = calculateSlot;
}
