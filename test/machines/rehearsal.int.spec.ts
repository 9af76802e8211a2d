import { execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { MARK, machinesAvailable } from '../../scripts/lib/machines.mjs';
import { processesWithEnv } from '../support/process-table';

const ROOT = join(__dirname, '..', '..');
const available = machinesAvailable();
const describeWithMachines = available.ok ? describe : describe.skip;
if (!available.ok) console.warn(`rehearsal.int.spec skipped: ${available.why}`);

/** Runs `npm run rehearsal`'s script to its end; its exit code and output. */
function rehearse(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, 'scripts', 'rehearsal.mjs'), ...args], { cwd: ROOT });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('close', (code) => resolve({ code, output }));
  });
}

describeWithMachines('npm run rehearsal: the deployment as machines, sold through its balancer and audited', () => {
  it('comes up, sells a burst, passes its audit, and leaves no machine, link or process behind', async () => {
    const { code, output } = await rehearse(['--buyers', '150', '--stock', '60']);
    if (code !== 0) throw new Error(`the rehearsal exited ${code}:\n${output}`);
    expect(output).toMatch(/PASS {2}units sold ≤ stock \(60 of 60\)/);
    expect(output).toMatch(/PASS {2}the audit passed/);
    expect(output).toMatch(/PASS {2}the replica holds every order row/);
    expect(output).toMatch(/answers \{"202":60,"410":90\}/);
    const id = /network ([0-9a-f]{4})\)/.exec(output)?.[1];
    expect(id).toBeDefined();
    expect(execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })).not.toContain(`fs-${id}-`);
    expect(execFileSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' })).not.toContain(`-${id}`);
    expect(processesWithEnv(MARK, id!)).toEqual([]);
  }, 300_000);
});
