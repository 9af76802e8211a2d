import type { SaleDashboard } from '@flash-sale/contract';
import { lazy, type ReactNode, Suspense, useId } from 'react';
import { type LivePoint, useLiveSeries } from './live-series';
import type { SeriesLine } from './SeriesPlot';

const SeriesPlot = lazy(() => import('./SeriesPlot'));

const n = (value: number) => value.toLocaleString('en-US');
const ms = (value: number) => `${value.toLocaleString('en-US', { maximumFractionDigits: 2 })} ms`;

/**
 * The reservation latency, hand-off backlog and drift of a Redis-backed sale, each drawn over the samples
 * this page has seen (live-series.ts). Render it keyed by sale: another sale starts its own series.
 */
export function LiveSeriesCharts({ sample }: { sample: SaleDashboard }) {
  const points = useLiveSeries(sample);
  const { handoff, audit } = sample;
  return (
    <div className="live-charts">
      <LiveChart
        title="Reservation latency"
        className="latency-chart"
        points={points}
        lines={[
          { reading: 'p95Ms', name: 'p95' },
          { reading: 'p50Ms', name: 'p50', dashed: true },
        ]}
        unit="ms"
        wholeNumbers={false}
      >
        <LatencyCaption sample={sample} />
      </LiveChart>
      <LiveChart
        title="Hand-off backlog"
        className="backlog-chart"
        points={points}
        lines={[{ reading: 'backlog', name: 'unwritten' }]}
        unit="reservations"
        wholeNumbers
      >
        Now <strong>{n(handoff.unwritten)}</strong> reservations waiting to be written to MySQL (
        {n(handoff.beingWritten)} being written).
      </LiveChart>
      <LiveChart
        title="Drift"
        className="drift-chart"
        points={points}
        lines={[{ reading: 'drift', name: 'drift' }]}
        unit="units"
        wholeNumbers
      >
        {audit.drift === undefined ? (
          'Not measured in this sample.'
        ) : (
          <>
            Now <strong>{n(audit.drift)}</strong> units between Redis and MySQL (0: they agree; mid-burst, a reservation
            a moment ahead of its order row).
          </>
        )}
      </LiveChart>
    </div>
  );
}

function LatencyCaption({ sample }: { sample: SaleDashboard }) {
  const latency = sample.reservationLatency;
  const what = 'The reservation script’s Redis round trip, as timed by this API process over all the sales it sells.';
  if (!latency) return <>Measuring: the next sample brings the first window. {what}</>;
  if (latency.p50Ms === null || latency.p95Ms === null || latency.p99Ms === null) {
    return (
      <>
        No reservation timed in the last {latency.windowSeconds} s. {what}
      </>
    );
  }
  return (
    <>
      p95 <strong>{ms(latency.p95Ms)}</strong> · p50 <strong>{ms(latency.p50Ms)}</strong> · p99{' '}
      <strong>{ms(latency.p99Ms)}</strong> over {n(latency.calls)} call{latency.calls === 1 ? '' : 's'} in the last{' '}
      {latency.windowSeconds} s. {what}
    </>
  );
}

/** One small chart: its heading, its lines over the page's samples, and a caption saying the latest reading. */
function LiveChart({
  title,
  className,
  points,
  lines,
  unit,
  wholeNumbers,
  children,
}: {
  title: string;
  className: string;
  points: readonly LivePoint[];
  lines: readonly SeriesLine[];
  unit: string;
  wholeNumbers: boolean;
  children: ReactNode;
}) {
  const headingId = useId();
  return (
    <figure className={`live-chart ${className}`} aria-labelledby={headingId}>
      <h3 id={headingId}>{title}</h3>
      <div className="live-chart__plot" aria-hidden="true">
        <Suspense fallback={null}>
          <SeriesPlot points={points} lines={lines} unit={unit} wholeNumbers={wholeNumbers} />
        </Suspense>
      </div>
      <figcaption className="live-chart__caption">{children}</figcaption>
    </figure>
  );
}
