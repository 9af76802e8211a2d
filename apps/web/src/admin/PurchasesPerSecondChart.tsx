import { lazy, Suspense } from 'react';
import { peakSecond, purchasesText, totalPurchases, type SecondCount } from './purchases-per-second';

const PurchasesPlot = lazy(() => import('./PurchasesPlot'));

/**
 * Purchases in each second of the last minute, as counted (whole numbers: a bar is orders, not a
 * smoothed rate). The plot is for the eye; its text alternative is the caption (the last second, the
 * busiest one and the total), so the SVG is hidden from assistive technology.
 */
export function PurchasesPerSecondChart({ seconds }: { seconds: readonly SecondCount[] }) {
  const last = seconds.at(-1);
  return (
    <figure className="rate-chart">
      <div className="rate-chart__plot" aria-hidden="true">
        <Suspense fallback={null}>
          <PurchasesPlot seconds={seconds} />
        </Suspense>
      </div>
      <figcaption className="rate-chart__caption">
        {last ? (
          <>
            Last second: <strong>{purchasesText(last.purchases)}</strong>. Busiest second:{' '}
            <strong>{purchasesText(peakSecond(seconds))}</strong>;{' '}
            <strong>{purchasesText(totalPurchases(seconds))}</strong> in the last minute. Counted from written orders,
            by the second the unit was reserved.
          </>
        ) : (
          'Measuring: no whole second sampled yet.'
        )}
      </figcaption>
    </figure>
  );
}
