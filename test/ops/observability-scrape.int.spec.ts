import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dump } from 'js-yaml';
import { stopChild } from '../support/child-process';
import { waitFor } from '../support/fixtures';
import { freePort } from '../../scripts/lib/ports.mjs';
import {
  dashboardQueries,
  exportedSeriesNames,
  loadRules,
  PROMETHEUS_CONFIG,
  PROMETHEUS_OWN_SERIES,
  PROMETHEUS_PATH,
  type PrometheusConfig,
  readYaml,
  requireBinary,
  RULES_FILE,
  selectedSeries,
} from '../support/observability';
import { useStackWorld } from '../support/stack-world';

const METRICS_TOKEN = `${randomBytes(36).toString('base64')}Aa1`;

interface QueryAnswer {
  status: 'success' | 'error';
  error?: string;
  data?: { resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] };
}

/** A real Prometheus (Debian's binary) on a free port and a data folder of its own. */
class LocalPrometheus {
  private constructor(
    readonly url: string,
    private readonly child: ChildProcess,
    private readonly dir: string,
  ) {}

  static async start(config: PrometheusConfig, dir: string): Promise<LocalPrometheus> {
    const port = await freePort();
    const configFile = join(dir, 'prometheus.yml');
    writeFileSync(configFile, dump(config));
    const child = spawn(
      requireBinary(PROMETHEUS_PATH, 'PROMETHEUS_PATH'),
      [
        `--config.file=${configFile}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let log = '';
    child.stderr?.on('data', (chunk: Buffer) => (log = `${log}${chunk.toString()}`.slice(-4000)));
    const prometheus = new LocalPrometheus(`http://127.0.0.1:${port}`, child, dir);
    try {
      await waitFor(
        'Prometheus to be ready',
        async () => {
          if (child.exitCode !== null) throw new Error(`Prometheus exited (${child.exitCode}):\n${log}`);
          return fetch(`${prometheus.url}/-/ready`).then(
            (response) => response.status,
            () => 0,
          );
        },
        (status) => status === 200,
        30_000,
      );
    } catch (error) {
      await prometheus.stop();
      throw error;
    }
    return prometheus;
  }

  async query(expr: string): Promise<QueryAnswer> {
    const response = await fetch(`${this.url}/api/v1/query?${new URLSearchParams({ query: expr })}`);
    return (await response.json()) as QueryAnswer;
  }

  /** The value of a query that answers one sample, or undefined while it answers none. */
  async value(expr: string): Promise<number | undefined> {
    const answer = await this.query(expr);
    if (answer.status !== 'success') throw new Error(`${expr}: ${answer.error}`);
    const [sample] = answer.data?.result ?? [];
    return sample === undefined ? undefined : Number(sample.value[1]);
  }

  async stop(): Promise<void> {
    await stopChild(this.child, 'SIGTERM');
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * The observability files against the real apps: the API and worker of this file run with a
 * METRICS_TOKEN, as in production. Every series the dashboard and the rules read must be one they
 * export, and a real Prometheus — with the repository's scrape jobs and rules, pointed at this file's
 * ports — answers the funnel after a few purchases with their numbers.
 */
describe('the dashboard and the rules against a running API and worker (real Redis, MariaDB, Prometheus)', () => {
  const w = useStackWorld({
    env: async () => ({ METRICS_TOKEN, WORKER_METRICS_PORT: String(await freePort()) }),
  });
  const apiAddress = () => new URL(w.client.baseUrl).host;
  const workerAddress = () => `127.0.0.1:${w.testEnv.env['WORKER_METRICS_PORT']}`;

  async function scrape(address: string): Promise<string> {
    const response = await fetch(`http://${address}/metrics`, {
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    expect(response.status).toBe(200);
    return response.text();
  }

  it('exports every series the dashboard and the rules read (the API and the worker together)', async () => {
    const exported = new Set([
      ...exportedSeriesNames(await scrape(apiAddress())),
      ...exportedSeriesNames(await scrape(workerAddress())),
    ]);
    const { recording, alerts } = loadRules();
    const recorded = new Set(recording.map((rule) => rule.record));
    const readers = [
      ...dashboardQueries().map(({ panel, expr }) => ({ by: `dashboard panel "${panel}"`, expr })),
      ...recording.map((rule) => ({ by: `recording rule ${rule.record}`, expr: rule.expr })),
      ...alerts.map((rule) => ({ by: `alert ${rule.alert}`, expr: rule.expr })),
    ];
    const unknown = readers.flatMap(({ by, expr }) =>
      [...selectedSeries(expr)]
        .filter((name) => !exported.has(name) && !recorded.has(name) && !PROMETHEUS_OWN_SERIES.has(name))
        .map((name) => `${by} reads ${name}, which neither the API nor the worker exports`),
    );
    expect(unknown).toEqual([]);
    expect(readers.length).toBeGreaterThan(30);
  });

  it('a real Prometheus scrapes both with the token and answers the funnel: arrived 5, reserved 3, written 3, paid 2', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fs-prometheus-'));
    const tokenFile = join(dir, 'metrics-token');
    writeFileSync(tokenFile, METRICS_TOKEN, { mode: 0o600 });
    // The repository's configuration, with this file's ports for Docker's DNS and a scrape every second.
    const repository = readYaml<PrometheusConfig>(PROMETHEUS_CONFIG);
    const targets: Record<string, string> = { 'flash-sale-api': apiAddress(), 'flash-sale-worker': workerAddress() };
    const config: PrometheusConfig = {
      global: { scrape_interval: '1s', evaluation_interval: '1s' },
      rule_files: [RULES_FILE],
      scrape_configs: repository.scrape_configs.map(({ dns_sd_configs, ...job }) => {
        expect(dns_sd_configs).toBeDefined();
        expect(job.authorization?.credentials_file).toBeDefined();
        return {
          ...job,
          authorization: { credentials_file: tokenFile },
          static_configs: [{ targets: [targets[job.job_name]!] }],
        };
      }),
    };
    const prometheus = await LocalPrometheus.start(config, dir);
    try {
      // Prometheus takes seconds to find its targets; the counters add up from the start, so buyers go meanwhile.
      const { client, admin } = w;
      const sale = await client.createSale(admin, { name: 'Watched', priceCents: 100, stock: 3 });
      const buyers = await client.guests(5, 5);
      const answers = [];
      for (const buyer of buyers) answers.push({ buyer, answer: await client.buy(sale.id, buyer.token) });
      expect(answers.map(({ answer }) => answer.status)).toEqual([202, 202, 202, 410, 410]);
      const accepted = answers.filter(({ answer }) => answer.status === 202);
      for (const { buyer, answer } of accepted) await client.orderWritten(answer.body.orderNo, buyer.token, 20_000);
      for (const { buyer, answer } of accepted.slice(0, 2)) {
        const paid = await client.call<{ status: string }>('POST', `/api/orders/${answer.body.orderNo}/pay`, {
          token: buyer.token,
        });
        expect(paid.body.status).toBe('PAID');
      }

      for (const job of Object.keys(targets)) {
        await waitFor(
          `${job} scraped`,
          () => prometheus.value(`up{job="${job}"}`),
          (up) => up === 1,
          30_000,
        );
      }
      // The dashboard's funnel reads these recording rules, evaluated by this Prometheus from its scrapes.
      const funnel = async () => ({
        arrived: await prometheus.value('flash_sale:purchases_arrived:sum'),
        reserved: await prometheus.value('flash_sale:purchases_reserved:sum'),
        written: await prometheus.value('flash_sale:orders_written:sum'),
        paid: await prometheus.value('flash_sale:orders_paid:sum'),
      });
      const expected = { arrived: 5, reserved: 3, written: 3, paid: 2 };
      const seen = await waitFor(
        'the funnel in Prometheus',
        funnel,
        (steps) => JSON.stringify(steps) === JSON.stringify(expected),
        30_000,
      );
      expect(seen).toEqual(expected);
      expect(await prometheus.value(`flash_sale_oversold_units{sale="${sale.id}"}`)).toBe(0);

      // Every query of the dashboard is one this Prometheus evaluates without an error.
      for (const { panel, expr } of dashboardQueries()) {
        const answer = await prometheus.query(expr);
        expect({ panel, expr, status: answer.status, error: answer.error }).toEqual({
          panel,
          expr,
          status: 'success',
          error: undefined,
        });
      }
    } finally {
      await prometheus.stop();
    }
  });
});
