import type { SaleFunnel } from '@flash-sale/contract';
import { lazy, Suspense } from 'react';
import { funnelSteps } from './sale-funnel';

const FunnelPlot = lazy(() => import('./FunnelPlot'));

/**
 * How far the sale's buyers got, step by step. The bars are for the eye; the list of steps under them
 * is their text alternative, so the SVG is hidden from assistive technology.
 */
export function SaleFunnelChart({ funnel }: { funnel: SaleFunnel }) {
  const steps = funnelSteps(funnel);
  return (
    <figure className="funnel-chart" aria-label="Sale funnel">
      <div className="funnel-chart__plot" aria-hidden="true">
        <Suspense fallback={null}>
          <FunnelPlot steps={steps} />
        </Suspense>
      </div>
      <figcaption>
        <ol className="funnel-chart__steps" aria-label="Funnel steps">
          {steps.map((step) => (
            <li key={step.label}>
              {step.label}: <strong>{step.count.toLocaleString('en-US')}</strong> {step.unit}
            </li>
          ))}
        </ol>
        <p className="admin-muted admin-small">
          Read from MySQL with each sample.
          {funnel.joined !== undefined &&
            ' A buyer whose pass expired unused is back in the line, no longer admitted.'}{' '}
          Reserved but not written: still in the hand-off, or refused by MySQL (FAILED).
        </p>
      </figcaption>
    </figure>
  );
}
