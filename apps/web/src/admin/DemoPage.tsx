import { DEMO_LIMITS, type DemoRunReport, type DemoStrategyResult } from '@flash-sale/contract';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, lazy, Suspense, useId, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api, queryKeys } from '../api/endpoints';
import { StrategyBadge } from '../components/badges';
import { ErrorNotice } from '../components/ErrorNotice';
import { formatDateTime } from '../components/format';
import { NumberField } from '../components/FormField';
import { Cell, numeric, TableHead } from '../components/Table';
import { asAdmin } from './admin-request';

const DemoPlot = lazy(() => import('./DemoPlot'));

const POLL_MS = 500;

const PHASE_LABEL: Record<DemoStrategyResult['phase'], string> = {
  waiting: 'waiting',
  preparing: 'creating the sale, handing out tokens',
  buying: 'buyers are buying',
  settling: 'writing orders, auditing',
  done: 'done',
  failed: 'failed',
};

/** How big a run is: the units of each strategy's sale, and the buyers who all arrive at once. */
const RUN_SIZE_FIELDS = [
  { key: 'stock', label: 'Stock (units per sale)', max: DEMO_LIMITS.maxStock },
  { key: 'buyers', label: 'Buyers (one unit each, all at once)', max: DEMO_LIMITS.maxBuyers },
] as const;

/**
 * The oversell demonstration in one click: the server makes one sale per strategy, fires the same
 * burst of distinct buyers at each through its own API, and audits every sale. The run id is in the
 * URL, so a reload (or a colleague's tab) shows the same run.
 */
export function DemoPage() {
  const [params, setParams] = useSearchParams();
  const runId = params.get('run') ?? '';
  const [size, setSize] = useState({ stock: 50, buyers: 500 });
  // On by default: without a paused holder redis-lock-unfenced never oversells, and the demo would miss it.
  const [pauseLockHolder, setPauseLockHolder] = useState(true);
  const ids = { pause: useId(), pauseHint: useId() };
  const queryClient = useQueryClient();

  const start = useMutation({
    mutationFn: () => asAdmin((token) => api.startDemoRun({ ...size, pauseLockHolder }, token)),
    onSuccess: ({ id }) => {
      setParams({ run: id }, { replace: false });
      void queryClient.invalidateQueries({ queryKey: queryKeys.demoRuns });
    },
  });
  const run = useQuery({
    queryKey: queryKeys.demoRun(runId),
    queryFn: ({ signal }) => asAdmin((token) => api.demoRun(runId, token, signal)),
    enabled: runId !== '',
    refetchInterval: (query) => (query.state.data?.status === 'running' || !query.state.data ? POLL_MS : false),
  });
  const runs = useQuery({
    // Keyed by the shown run's status too: the list is read again when that run finishes.
    queryKey: [...queryKeys.demoRuns, run.data?.status ?? 'none'],
    queryFn: ({ signal }) => asAdmin((token) => api.demoRuns(token, signal)),
    refetchInterval: run.data?.status === 'running' ? 2_000 : false,
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!start.isPending) start.mutate();
  };
  const running = run.data?.status === 'running';

  return (
    <>
      <div className="page-header">
        <div>
          <h1>Oversell demo</h1>
          <p>
            One sale per strategy. The strategies take their turn one after another; each faces the same burst of
            distinct buyers, all arriving at once — then its sale is audited. <strong>naive-unsafe</strong> reads,
            checks and writes without a guard, so concurrent buyers overwrite each other’s stock update and it promises
            more units than exist. <strong>redis-lock-unfenced</strong> does the same under a Redis lock it trusts:
            right until a lock holder pauses past the lock’s lifetime. The others never oversell.
          </p>
        </div>
      </div>
      <form className="card panel demo-form" onSubmit={submit}>
        {RUN_SIZE_FIELDS.map(({ key, label, max }) => (
          <NumberField
            key={key}
            label={label}
            min={1}
            max={max}
            value={size[key]}
            onChange={(event) => setSize({ ...size, [key]: Number(event.target.value) })}
            required
          />
        ))}
        <div className="field">
          <label htmlFor={ids.pause}>
            <input
              id={ids.pause}
              type="checkbox"
              checked={pauseLockHolder}
              onChange={(event) => setPauseLockHolder(event.target.checked)}
              aria-describedby={ids.pauseHint}
            />{' '}
            Pause the lock holder past its TTL
          </label>
          <p id={ids.pauseHint} className="admin-small">
            In the redis-lock sales, the first buyer to get the lock stops between reading the stock and writing it,
            longer than the lock lives, as a GC pause would. With a fencing token its late write is refused; without one
            it writes over the sales made meanwhile.
          </p>
        </div>
        <button type="submit" className="button button--large" disabled={start.isPending || running}>
          {start.isPending || running ? 'Running…' : 'Run the demo'}
        </button>
      </form>
      {start.isError && <ErrorNotice error={start.error} title="Could not start the demo" />}
      {run.isError && <ErrorNotice error={run.error} title="Could not load the run" />}
      {run.data && <DemoRunView run={run.data} />}
      <section className="card panel" aria-labelledby="demo-history">
        <h2 id="demo-history">Earlier runs</h2>
        {runs.isError && <ErrorNotice error={runs.error} />}
        {runs.data && runs.data.length === 0 && <p>None yet.</p>}
        {runs.data && runs.data.length > 0 && (
          <ul className="demo-runs">
            {runs.data.map((item) => (
              <li key={item.id}>
                <Link
                  to={`/admin/demo?run=${encodeURIComponent(item.id)}`}
                  aria-current={item.id === runId ? 'true' : undefined}
                >
                  {formatDateTime(item.createdAt)}
                </Link>{' '}
                — {item.buyers} buyers, {item.stock} units · {item.status} · {runSummary(item)}
              </li>
            ))}
          </ul>
        )}
      </section>
    </>
  );
}

function runSummary(run: DemoRunReport): string {
  return run.results
    .filter((result) => result.oversold !== null)
    .map((result) => `${result.strategy} oversold ${result.oversold}`)
    .join(', ');
}

function DemoRunView({ run }: { run: DemoRunReport }) {
  const n = (value: number | null, suffix = '') => (value === null ? '—' : `${value.toLocaleString('en-US')}${suffix}`);
  return (
    <section className="card panel" aria-labelledby="demo-results" aria-busy={run.status === 'running'}>
      <h2 id="demo-results">
        {run.status === 'running' ? 'Running' : run.status === 'failed' ? 'Run failed' : 'Results'}: {run.buyers}{' '}
        buyers, {run.stock} units per sale{run.pauseLockHolder && ', lock holder paused past its TTL'}
      </h2>
      {run.error && (
        <p className="notice notice--error" role="alert">
          {run.error}
        </p>
      )}
      <div className="table-wrap">
        <table className="table table--cards demo-table">
          <caption className="visually-hidden">Results per strategy</caption>
          <TableHead
            columns={[
              'Strategy',
              ...['Accepted', 'Refused', 'Errors', 'Oversold', 'Req/s', 'p50 / p95'].map(numeric),
              'Audit',
            ]}
          />
          <tbody>
            {run.results.map((result) => (
              <tr key={result.strategy} data-strategy={result.strategy}>
                <th scope="row" data-label="Strategy">
                  <StrategyBadge strategy={result.strategy} />
                  {result.phase !== 'done' && (
                    <span className="demo-table__phase">
                      {PHASE_LABEL[result.phase]}
                      {result.phase === 'buying' && ` (${result.sent}/${run.buyers})`}
                      {result.error && `: ${result.error}`}
                    </span>
                  )}
                </th>
                <Cell label="Accepted" numeric>
                  {n(result.accepted)}
                </Cell>
                <Cell label="Refused" numeric>
                  {n(result.refused)}
                </Cell>
                <Cell label="Errors" numeric>
                  {n(result.errors)}
                </Cell>
                <Cell label="Oversold" numeric className={result.oversold ? 'demo-table__oversold' : undefined}>
                  {n(result.oversold)}
                </Cell>
                <Cell label="Req/s" numeric>
                  {n(result.requestsPerSecond)}
                </Cell>
                <Cell label="p50 / p95" numeric className="demo-table__latency">
                  {n(result.p50Ms && Math.round(result.p50Ms))} / {n(result.p95Ms && Math.round(result.p95Ms), ' ms')}
                </Cell>
                <Cell label="Audit">
                  {result.audit ? (
                    result.audit.ok ? (
                      <span className="badge badge--ok">ok</span>
                    ) : (
                      <span
                        className="badge badge--unsafe"
                        title={`${result.audit.held} units held of ${result.audit.stock}`}
                      >
                        not ok
                      </span>
                    )
                  ) : (
                    '—'
                  )}
                  {result.saleId && (
                    <>
                      {' '}
                      <Link to={`/admin/sales/${encodeURIComponent(result.saleId)}`} className="admin-small">
                        sale
                      </Link>
                    </>
                  )}
                </Cell>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <dl className="demo-legend admin-small">
        <dt>Accepted</dt>
        <dd>201/202: the buyer was promised a unit.</dd>
        <dt>Refused</dt>
        <dd>409/410: sold out, limit reached — a correct “no”.</dd>
        <dt>Errors</dt>
        <dd>
          A buyer told 503 with retry-after (the optimistic retries ran out, or the lock could not be had or was lost in
          time; nothing was sold) tries again with the same submit token, as the storefront does, twice at most. An
          error is a buyer still told to try again after that, or left without an answer: never an oversell.
        </dd>
        <dt>Oversold</dt>
        <dd>From the sale’s audit: units promised beyond the stock. Anything above 0 is the bug.</dd>
      </dl>
      <figure className="demo-chart">
        <div className="demo-chart__plot" aria-hidden="true">
          <Suspense fallback={null}>
            <DemoPlot results={run.results} stock={run.stock} />
          </Suspense>
        </div>
        <figcaption className="admin-small">
          Units promised to buyers (accepted) and units oversold, against the stock, per strategy.
        </figcaption>
      </figure>
    </section>
  );
}
