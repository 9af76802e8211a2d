// When a waiting room's crowd arrives: the k6 scenario and the Node crowd plan their buyers alike.

/**
 * When each buyer arrives (epoch ms): the opening crowd, `early` buyers spread evenly from `from` until
 * `earlyUntil` (before the opening), then `late` buyers, `lateRate` a second from the opening on.
 */
export function roomArrivals(o: {
  from: number;
  early: number;
  earlyUntil: number;
  opensAt: number;
  late: number;
  lateRate: number;
}): number[] {
  const spread = Math.max(0, o.earlyUntil - o.from);
  const early = Array.from({ length: o.early }, (_, i) => o.from + (spread * i) / Math.max(1, o.early));
  const late = Array.from({ length: o.late }, (_, k) => o.opensAt + ((k + 1) * 1000) / o.lateRate);
  return [...early, ...late];
}
