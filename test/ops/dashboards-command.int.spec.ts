import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../scripts/lib/ports.mjs';
import { runScript } from '../support/child-process';
import { loadRules, PROMETHEUS_PATH, requireBinary } from '../support/observability';
import { useStackWorld } from '../support/stack-world';

const runDashboards = (args: string[], env: Record<string, string> = {}) =>
  runScript('dashboards.mjs', args, { PROMETHEUS_PATH: requireBinary(PROMETHEUS_PATH, 'PROMETHEUS_PATH'), ...env });

/**
 * `npm run dashboards` (scripts/dashboards.mjs): the installed Prometheus against a running API and
 * worker, with the shipped rules, and pages that answer on this version.
 */
describe('npm run dashboards: Prometheus without Docker (real API, worker, Prometheus)', () => {
  const w = useStackWorld({ env: async () => ({ WORKER_METRICS_PORT: String(await freePort()) }) });
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  it('both targets up, every shipped rule loaded, and the pages it prints answer', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fs-dashboards-'));
    dirs.push(dir);
    const worker = `127.0.0.1:${w.testEnv.env['WORKER_METRICS_PORT']}`;
    const { code, stdout, stderr } = await runDashboards([
      '--check',
      '--api',
      w.client.baseUrl,
      '--worker',
      worker,
      '--data',
      dir,
      '--port',
      String(await freePort()),
    ]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const lines = stdout.split('\n');
    expect(lines).toContain(`    flash-sale-api ${new URL(w.client.baseUrl).host} up`);
    expect(lines).toContain(`    flash-sale-worker ${worker} up`);
    const { recording, alerts } = loadRules();
    expect(lines).toContainEqual(
      expect.stringMatching(
        new RegExp(`^ {2}rules +\\d+ groups: ${recording.length} recording, ${alerts.length} alerts`),
      ),
    );
    // The pages named are the installed version's: 2.x answers 404 on /alerts and serves /classic/alerts.
    const pages = lines
      .filter((line) => /^ {2}(alerts|targets|graph) +http/.test(line))
      .map((line) => line.split(/ +/)[2]!);
    expect(pages).toHaveLength(3);
    for (const page of pages) expect(page).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/(classic\/)?(alerts|targets|graph)$/);
  }, 90_000);

  it('says what to do when nothing answers, when Prometheus is missing, and at an unknown option', async () => {
    const nobody = await runDashboards(['--check', '--api', `http://127.0.0.1:${await freePort()}`]);
    expect(nobody.code).toBe(2);
    expect(nobody.stderr).toMatch(/^Nothing answers at http:\/\/127\.0\.0\.1:\d+\/metrics: start the app first/);

    const missing = await runDashboards(['--check'], {
      PROMETHEUS_PATH: '/nonexistent/prometheus',
      PATH: '/nonexistent',
    });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('sudo apt-get install prometheus');

    const unknown = await runDashboards(['--apii', 'x']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr.trim().split('\n')).toHaveLength(1);
  });
});
