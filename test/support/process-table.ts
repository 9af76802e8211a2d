import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** The machine's processes, as `ps` lists them, for tests of what a launcher started and stopped. */
export interface ProcessEntry {
  pid: number;
  ppid: number;
  args: string;
}

export function processTable(): ProcessEntry[] {
  return execFileSync('ps', ['-e', '-o', 'pid=,ppid=,args='], { encoding: 'utf8' })
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line))
    .filter((match) => match !== null)
    .map((match) => ({ pid: Number(match[1]), ppid: Number(match[2]), args: match[3]! }));
}

/** The pids of `parent`'s children running `entry` (an app's dist/*.js), oldest first. */
export function childrenRunning(parent: number, entry: string): number[] {
  return processTable()
    .filter((candidate) => candidate.ppid === parent && candidate.args.includes(entry))
    .map((candidate) => candidate.pid);
}

/** Every process under `root` (children, grandchildren…), without `root`. */
export function descendants(root: number): number[] {
  const table = processTable();
  const found: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const parent = queue.shift()!;
    for (const entry of table.filter((candidate) => candidate.ppid === parent)) {
      found.push(entry.pid);
      queue.push(entry.pid);
    }
  }
  return found;
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Every live process whose environment holds `name=value` (Linux: /proc/<pid>/environ). A variable
 * given to a launcher is inherited by all it starts, so this finds its whole offspring — orphans too,
 * which a walk down from the launcher's pid misses once they are adopted by another process.
 */
export function processesWithEnv(name: string, value: string): ProcessEntry[] {
  const wanted = `${name}=${value}`;
  const marked = new Set<number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, 'latin1').split('\0').includes(wanted)) marked.add(Number(entry));
    } catch {
      // exited meanwhile, or not ours to read
    }
  }
  return processTable().filter((entry) => marked.has(entry.pid));
}
