import { lazy, Suspense } from 'react';
import { formatRate, peakRate, type RatePoint } from './purchase-rate';

const RatePlot = lazy(() => import('./RatePlot'));

interface PurchaseRateChartProps {
  points: readonly RatePoint[];
  /** Epoch ms where the first point's interval begins. */
  windowStart: number;
}

function formatSpan(seconds: number): string {
  return seconds < 90 ? `${Math.round(seconds)} seconds` : `${Math.round(seconds / 60)} minutes`;
}

/**
 * Purchases per second over the last couple of minutes. The plot is for the eye; its text alternative
 * is the caption (current and peak rate), so the SVG is hidden from assistive technology.
 */
export function PurchaseRateChart({ points, windowStart }: PurchaseRateChartProps) {
  const last = points.at(-1);
  return (
    <figure className="rate-chart">
      <div className="rate-chart__plot" aria-hidden="true">
        <Suspense fallback={null}>
          <RatePlot points={points} />
        </Suspense>
      </div>
      <figcaption className="rate-chart__caption">
        {last ? (
          <>
            Now <strong>{formatRate(last.perSecond)}</strong> purchases per second; peak{' '}
            <strong>{formatRate(peakRate(points))}</strong> per second over the last{' '}
            {formatSpan((last.at - windowStart) / 1_000)}.
          </>
        ) : (
          'Measuring: the rate appears with the second sample.'
        )}
      </figcaption>
    </figure>
  );
}
