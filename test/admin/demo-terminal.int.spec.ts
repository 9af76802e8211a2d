import { runScript } from '../support/child-process';
import { useStackWorld } from '../support/stack-world';

/** `npm run demo`'s script against the test stack. */
const runDemo = (baseUrl: string, adminPassword: string, args: string[]) =>
  runScript('demo.mjs', ['--url', baseUrl, ...args], { ADMIN_PASSWORD: adminPassword });

/** The terminal demo (scripts/demo.mjs) against the real API and worker: what a user reads. */
describe('npm run demo in the terminal (real API, worker, Redis, MariaDB)', () => {
  const w = useStackWorld();

  it('every line fits 80 columns, no progress line is left half-drawn in a log, and the tables say the verdict', async () => {
    const { code, stdout, stderr } = await runDemo(w.client.baseUrl, w.testEnv.env['ADMIN_PASSWORD']!, [
      '--stock',
      '5',
      '--buyers',
      '40',
      '--strategies',
      'redis-lua,naive-unsafe',
      '--no-pause-lock-holder',
    ]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const lines = stdout.split('\n');
    expect(lines.filter((line) => line.length > 80)).toEqual([]);
    // Not a terminal: no carriage returns, one line as each strategy finishes.
    expect(stdout).not.toContain('\r');
    expect(lines).toContain('  redis-lua done');
    expect(lines).toContain('  naive-unsafe done');
    expect(lines).toContainEqual(
      expect.stringMatching(/^strategy +accepted +refused +errors +retried +oversold +audit$/),
    );
    expect(lines).toContainEqual(expect.stringMatching(/^redis-lua +5 +35 +0 +\S+ +0 +ok$/));
    expect(lines).toContainEqual(expect.stringMatching(/^naive-unsafe\* +\d+/));
    expect(lines).toContainEqual(expect.stringMatching(/^strategy +req\/s +p50 +p95$/));
    expect(lines).toContain('Every guarded strategy sold at most its stock, and its audit balanced.');
  }, 120_000);
});
