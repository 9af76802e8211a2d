import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/**
 * `npm run k6 -- <scenario> [k6 options]` (scripts/k6.mjs) against a stand-in k6 binary that answers
 * `version` as told and records how it was run: the .ts as it is on k6 0.57 and later, a fresh bundle
 * on an older k6, k6's exit code passed on.
 */
describe('npm run k6: a scenario on whatever k6 is installed', () => {
  let dir: string;
  let fakeK6: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'fake-k6-'));
    fakeK6 = join(dir, 'k6');
    writeFileSync(
      fakeK6,
      [
        '#!/bin/sh',
        'if [ "$1" = version ]; then echo "k6 v$FAKE_K6_VERSION (go1.23.5, linux/amd64)"; exit 0; fi',
        'pwd > "$FAKE_K6_RUN"',
        'for arg in "$@"; do echo "$arg" >> "$FAKE_K6_RUN"; done',
        'exit "${FAKE_K6_EXIT:-0}"',
      ].join('\n'),
    );
    chmodSync(fakeK6, 0o755);
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function run(version: string, args: string[], env: Record<string, string> = {}) {
    const record = join(dir, `run-${version}-${Date.now()}`);
    const result = spawnSync(process.execPath, [join(ROOT, 'scripts', 'k6.mjs'), ...args], {
      cwd: dir, // anywhere: k6 must still run from the repository root
      encoding: 'utf8',
      env: { ...process.env, K6: fakeK6, FAKE_K6_VERSION: version, FAKE_K6_RUN: record, ...env },
    });
    let ran: string[] = [];
    try {
      ran = readFileSync(record, 'utf8').trim().split('\n');
    } catch {
      // k6 was never asked to run
    }
    return { status: result.status, output: `${result.stdout}${result.stderr}`, cwd: ran[0], argv: ran.slice(1) };
  }

  it('k6 1.3 runs the TypeScript scenario as it is, with the options given, from the repository root', () => {
    const result = run('1.3.0', ['strategy-comparison', '-e', 'STRATEGIES=redis-lua', '--quiet']);
    expect(result.status).toBe(0);
    expect(result.cwd).toBe(ROOT);
    expect(result.argv).toEqual(['run', '-e', 'STRATEGIES=redis-lua', '--quiet', 'load-tests/strategy-comparison.ts']);
    expect(result.output).toContain('k6 1.3.0 runs TypeScript');
  });

  it('k6 0.48 runs the bundle, written just before from the .ts', () => {
    const startedAt = Date.now();
    const result = run('0.48.0', ['load-tests/stampede.ts', '-e', 'USERS=10']);
    expect(result.status).toBe(0);
    expect(result.argv).toEqual(['run', '-e', 'USERS=10', 'load-tests/dist/stampede.js']);
    const bundle = join(ROOT, 'load-tests', 'dist', 'stampede.js');
    expect(statSync(bundle).mtimeMs).toBeGreaterThanOrEqual(startedAt - 1000);
    const source = readFileSync(bundle, 'utf8');
    expect(source).not.toMatch(/^import type /m); // types stripped: what k6 0.48 rejects with exit 107
    expect(source).toMatch(/from "k6\/execution"/); // k6's own modules stay imports
    expect(result.output).toMatch(/k6 0\.48\.0 is older than 0\.57.*load-tests\/dist\/stampede\.js/);
  });

  it("passes k6's exit code on (99: a verdict failed)", () => {
    expect(run('1.3.0', ['flash-sale-burst'], { FAKE_K6_EXIT: '99' }).status).toBe(99);
  });

  it('an unknown scenario or no k6 at all: exit 2, saying what there is and what to do', () => {
    const unknown = run('1.3.0', ['flash-sale']);
    expect(unknown.status).toBe(2);
    expect(unknown.output).toContain('No scenario "flash-sale"');
    expect(unknown.output).toContain('flash-sale-burst, soak, stampede, strategy-comparison');
    expect(unknown.argv).toEqual([]);

    const missing = run('1.3.0', ['soak'], { K6: join(dir, 'no-such-k6') });
    expect(missing.status).toBe(2);
    expect(missing.output).toMatch(/Install k6 .*or set K6 to its path/);
  });
});
