import type { SaleFunnel } from '@flash-sale/contract';

/** One bar of the funnel: a step, how many got there, and what is counted. */
export interface FunnelStep {
  label: string;
  count: number;
  unit: 'buyers' | 'purchases' | 'orders';
}

/** The funnel's steps in order; the room's two only for a sale with a waiting room (docs/api.md `SaleFunnel`). */
export function funnelSteps(funnel: SaleFunnel): FunnelStep[] {
  const room: FunnelStep[] =
    funnel.joined === undefined || funnel.admitted === undefined
      ? []
      : [
          { label: 'Joined the room', count: funnel.joined, unit: 'buyers' },
          { label: 'Admitted', count: funnel.admitted, unit: 'buyers' },
        ];
  return [
    ...room,
    { label: 'Reserved', count: funnel.reserved, unit: 'purchases' },
    { label: 'Written', count: funnel.written, unit: 'orders' },
    { label: 'Paid', count: funnel.paid, unit: 'orders' },
  ];
}
