import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/**
 * Every command-line tool of the repository answers `--help` with its options (exit 0) and an unknown
 * option with one line that names it and how to get help (exit 2) — never a stack trace.
 */
describe('the command-line tools have manners: --help, and one line for an unknown option', () => {
  // Where `npm run chaos` builds the CLI (a gitignored dist/): the explorer finds the repository from
  // there, and the bundle the packages it leaves out.
  const dir = join(ROOT, 'test', 'chaos', 'dist', 'test', 'chaos');
  const bundle = join(dir, `cli-manners-${process.pid}.js`);
  afterAll(() => rmSync(bundle, { force: true }));

  /** The explorer's CLI is TypeScript: bundled on the fly (its packages left to node_modules). */
  const chaosCli = () => {
    const out = bundle;
    mkdirSync(dir, { recursive: true });
    execFileSync(join(ROOT, 'node_modules', '.bin', 'esbuild'), [
      join(ROOT, 'test', 'chaos', 'cli.ts'),
      '--bundle',
      '--platform=node',
      '--packages=external',
      '--log-level=error',
      `--outfile=${out}`,
    ]);
    return out;
  };

  const tools: { name: string; entry: () => string; helpMentions: string }[] = [
    { name: 'demo', entry: () => join(ROOT, 'scripts', 'demo.mjs'), helpMentions: '--no-pause-lock-holder' },
    { name: 'dashboards', entry: () => join(ROOT, 'scripts', 'dashboards.mjs'), helpMentions: '--check' },
    { name: 'bench', entry: () => join(ROOT, 'bench', 'purchase-bench.mjs'), helpMentions: '--only SECTION' },
    { name: 'room-crowd', entry: () => join(ROOT, 'bench', 'room-crowd.mjs'), helpMentions: 'EARLY_BUYERS' },
    { name: 'k6', entry: () => join(ROOT, 'scripts', 'k6.mjs'), helpMentions: 'strategy-comparison' },
    { name: 'chaos', entry: chaosCli, helpMentions: '--keep-going' },
  ];

  it.each(tools)('$name', ({ name, entry, helpMentions }) => {
    const script = entry();
    const help = spawnSync(process.execPath, [script, '--help'], { cwd: ROOT, encoding: 'utf8' });
    expect(help.status).toBe(0);
    expect(help.stdout).toContain(helpMentions);

    const unknown = spawnSync(process.execPath, [script, '--no-such-option'], { cwd: ROOT, encoding: 'utf8' });
    expect(unknown.status).toBe(2);
    const lines = unknown.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`(npm run ${name} -- --help)`);
    expect(unknown.stderr).not.toMatch(/\bat .*:\d+:\d+/); // no stack trace
  });
});
