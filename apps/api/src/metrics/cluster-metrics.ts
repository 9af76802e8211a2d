import cluster from 'node:cluster';
import { errorMessage } from '@flash-sale/domain';
import { AggregatorRegistry, type Registry } from 'prom-client';

/**
 * `/metrics` when several API processes share one port (apps/api/src/cluster.ts): a scrape reaches
 * whichever process the connection was handed to, so that process asks the cluster's primary, which
 * gathers every process's registry with prom-client's AggregatorRegistry and answers with the sum.
 * Counters and histograms add up; a series every process reads from Redis or MySQL at scrape time
 * (queue depth, drift, leases, backlog) says `aggregator: 'max'` so it is not counted N times.
 */
const ASK = 'flash-sale:cluster-metrics-request';
const ANSWER = 'flash-sale:cluster-metrics';
/** The primary's gathering gives up after 5 s (prom-client's own limit); a little more here. */
const ANSWER_TIMEOUT_MS = 6_000;

interface Ask {
  type: typeof ASK;
  id: number;
}
interface Answer {
  type: typeof ANSWER;
  id: number;
  body?: string;
  error?: string;
}

function isMessage<T extends { type: string }>(message: unknown, type: T['type']): message is T {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === type;
}

/** In the cluster's primary: answers each API process's request for every process's metrics. */
export function serveClusterMetrics(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: unknown) => {
    if (!isMessage<Ask>(message, ASK)) return;
    const reply = (answer: Omit<Answer, 'type' | 'id'>) => {
      if (worker.isConnected()) worker.send({ type: ANSWER, id: message.id, ...answer });
    };
    aggregator.clusterMetrics().then(
      (body) => reply({ body }),
      (error: unknown) => reply({ error: errorMessage(error) }),
    );
  });
}

/**
 * In an API process forked by the cluster's primary: its registry is offered to the primary's
 * gathering, and `render()` answers for the whole cluster. Undefined in a process of its own (main.ts
 * run directly, the tests), which renders its own registry.
 */
export function clusterMetricsFor(registry: Registry): { render(): Promise<string> } | undefined {
  if (!cluster.isWorker || !process.send) return undefined;
  AggregatorRegistry.setRegistries([registry]);
  new AggregatorRegistry(); // installs prom-client's answer to the primary's gathering requests
  const pending = new Map<number, { resolve: (body: string) => void; reject: (error: Error) => void }>();
  let nextId = 0;
  process.on('message', (message: unknown) => {
    if (!isMessage<Answer>(message, ANSWER)) return;
    const waiter = pending.get(message.id);
    pending.delete(message.id);
    if (message.error !== undefined) waiter?.reject(new Error(`cluster metrics: ${message.error}`));
    else waiter?.resolve(message.body ?? '');
  });
  return {
    render: () =>
      new Promise<string>((resolve, reject) => {
        const id = nextId++;
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error(`cluster metrics: no answer from the primary within ${ANSWER_TIMEOUT_MS} ms`));
        }, ANSWER_TIMEOUT_MS);
        pending.set(id, {
          resolve: (body) => (clearTimeout(timer), resolve(body)),
          reject: (error) => (clearTimeout(timer), reject(error)),
        });
        process.send!({ type: ASK, id } satisfies Ask);
      }),
  };
}
