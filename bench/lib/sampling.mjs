/**
 * What a scenario cost: latencies, CPU per process from /proc (Linux), and Redis command time from
 * `INFO commandstats`. Everything runs on one machine, so the load generator, Redis, MariaDB, the API
 * and the worker share the CPUs: per-process CPU shows saturation, and Redis time per response what
 * the single Redis thread spends.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import os from 'node:os';
import { round } from './format.mjs';
import { MYSQL_SERVER_URL } from './settings.mjs';

/**
 * The processes a response costs the machine (the load generator excluded): the ceiling's server and
 * Redis; for the API also the worker writing its orders and MariaDB. The API and worker sit idle
 * during the ceiling's run, and do not count against it.
 */
const MACHINE_PROCESSES = { ceiling: ['ceiling', 'redis'], api: ['api', 'worker', 'redis', 'mysql'] };
/** Every process of ours whose CPU a response can be charged with. */
const OUR_PROCESSES = ['api', 'ceiling', 'worker', 'redis', 'mysql', 'loadGenerator'];

export function latencySummary(values) {
  if (values.length === 0) return { p50: null, p95: null, p99: null, max: null, mean: null };
  const sorted = Float64Array.from(values).sort();
  const at = (q) => round(sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]);
  const mean = sorted.reduce((sum, value) => sum + value, 0) / sorted.length;
  return { p50: at(0.5), p95: at(0.95), p99: at(0.99), max: round(sorted[sorted.length - 1]), mean: round(mean) };
}

/**
 * CPU time per process from /proc, in % of one core over an interval, plus the machine's busy share
 * of all cores: on a small box the load generator, Redis and MariaDB compete with the API.
 * `privateRedisPid`: the bench's own redis-server, when it started one (else the machine's is found).
 */
export function cpuSampler(privateRedisPid) {
  const clockTicks = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;
  const services = findServicePids(privateRedisPid);
  return {
    /**
     * `pids`: name -> pid, or a list of pids counted as one (an API of several processes, the masters
     * of a Redis Cluster); a name given here replaces the machine's own server of that name.
     */
    snapshot(pids) {
      const ticks = {};
      for (const [name, pid] of Object.entries({ ...services, ...pids }))
        if ([pid].flat().some(Boolean)) ticks[name] = { pid, ticks: processTicks(pid) };
      return { at: process.hrtime.bigint(), ticks, self: process.cpuUsage(), machine: machineTicks() };
    },
    /**
     * Per process: % of ONE core; machine*, steal*: % of all cores. `digits`: 0 for a loaded machine;
     * the idle scenario needs tenths (its target is 2 % of a core).
     */
    since(before, { digits = 0 } = {}) {
      const seconds = Number(process.hrtime.bigint() - before.at) / 1e9;
      const percent = {};
      for (const [name, { pid, ticks }] of Object.entries(before.ticks)) {
        const now = processTicks(pid);
        if (ticks !== undefined && now !== undefined)
          percent[name] = round(((now - ticks) / clockTicks / seconds) * 100, digits);
      }
      const self = process.cpuUsage(before.self);
      percent.loadGenerator = round(((self.user + self.system) / 1e6 / seconds) * 100, digits);
      return { ...percent, ...machineShares(before.machine, machineTicks(), percent, digits) };
    },
  };
}

/** utime + stime of a process (or the sum over a list), in clock ticks; undefined once one is gone. */
export function processTicks(pid) {
  if (Array.isArray(pid)) {
    const each = pid.filter(Boolean).map(processTicks);
    return each.includes(undefined) ? undefined : each.reduce((sum, ticks) => sum + ticks, 0);
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

function machineTicks() {
  try {
    // user nice system idle iowait irq softirq steal (guest time is already inside user)
    const [, ...values] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
    const numbers = values.slice(0, 8).map(Number);
    return {
      idle: numbers[3] + (numbers[4] ?? 0),
      irq: (numbers[5] ?? 0) + (numbers[6] ?? 0),
      steal: numbers[7] ?? 0,
      total: numbers.reduce((a, b) => a + b, 0),
    };
  } catch {
    return undefined;
  }
}

/** The machine-wide shares between two /proc/stat readings, and what no process of ours used. */
function machineShares(before, now, processPercent, digits) {
  if (!before || !now) return {};
  const total = now.total - before.total;
  const cores = os.cpus().length;
  const busyFraction = 1 - (now.idle - before.idle) / total;
  // Interrupt and softirq time (loopback TCP is largely softirq) belongs to no process: % of one core.
  const irq = ((now.irq - before.irq) / total) * cores * 100;
  const processesTotal = Object.values(processPercent).reduce((sum, value) => sum + (value ?? 0), 0);
  return {
    machineBusyOfAllCores: round(busyFraction * 100, digits),
    // Time the hypervisor gave to other guests: high steal means a noisy neighbour, not our code.
    stealOfAllCores: round(((now.steal - before.steal) / total) * 100, digits),
    irqSoftirq: round(irq, digits),
    // Busy CPU not accounted to the processes above nor to interrupts (another test run, the OS).
    otherProcesses: Math.max(0, round(busyFraction * cores * 100 - processesTotal - irq, digits)),
  };
}

/** The pids whose parent is `pid` (the processes a launcher forked), from /proc. */
export function childPids(pid) {
  const children = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Fields after the command name: state, ppid, ...
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) children.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return children;
}

/**
 * Redis and MariaDB/MySQL server processes on this machine, if any, for CPU accounting only: the one
 * listening on the port the bench connects to (BENCH_MYSQL_URL's, REDIS_URL's), else the first of its
 * name in this network namespace — other tests may run servers of the same name in namespaces of their
 * own (test/chaos's machines), and theirs must not be charged to the bench's purchases.
 */
function findServicePids(privateRedisPid) {
  const found = {};
  const portOf = (url, fallback) => {
    try {
      const { hostname, port } = new URL(url);
      return ['127.0.0.1', 'localhost', '[::1]', '0.0.0.0'].includes(hostname) ? Number(port || fallback) : undefined;
    } catch {
      return undefined;
    }
  };
  const mysqlPort = portOf(MYSQL_SERVER_URL, 3306);
  const redisPort = privateRedisPid ? undefined : portOf(process.env.REDIS_URL || 'redis://127.0.0.1:6379', 6379);
  const listening = listenerPids([mysqlPort, redisPort].filter(Boolean));
  const ownNetwork = namespaceOf('self');
  try {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      let comm;
      try {
        comm = readFileSync(`/proc/${entry}/comm`, 'utf8').trim();
      } catch {
        continue;
      }
      // Another network namespace's server is another test's (an unreadable namespace counts as ours).
      const network = namespaceOf(entry);
      if (network && ownNetwork && network !== ownNetwork) continue;
      if (comm === 'redis-server' && !found.redis) found.redis = Number(entry);
      if ((comm === 'mariadbd' || comm === 'mysqld') && !found.mysql) found.mysql = Number(entry);
    }
  } catch {
    // not Linux: no per-service numbers
  }
  // The server found listening on the bench's port wins over the first of its name.
  if (mysqlPort && listening.has(mysqlPort)) found.mysql = listening.get(mysqlPort);
  if (redisPort && listening.has(redisPort)) found.redis = listening.get(redisPort);
  if (privateRedisPid) found.redis = privateRedisPid;
  return found;
}

/** A process's network namespace (`/proc/<pid>/ns/net`), undefined when it cannot be read. */
function namespaceOf(pid) {
  try {
    return readlinkSync(`/proc/${pid}/ns/net`);
  } catch {
    return undefined;
  }
}

/**
 * The pid of the process listening on each TCP port, in this network namespace: the socket's inode from
 * /proc/net/tcp{,6}, then the process holding it. Ports whose owner cannot be read are left out.
 */
function listenerPids(ports) {
  const byInode = new Map();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address (hex ip:port), state 0A = LISTEN, inode
      if (fields.length < 10 || fields[3] !== '0A') continue;
      const port = parseInt(fields[1].split(':').pop(), 16);
      if (ports.includes(port)) byInode.set(fields[9], port);
    }
  }
  const found = new Map();
  if (byInode.size === 0) return found;
  try {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      let fds;
      try {
        fds = readdirSync(`/proc/${entry}/fd`);
      } catch {
        continue;
      }
      for (const fd of fds) {
        let target;
        try {
          target = readlinkSync(`/proc/${entry}/fd/${fd}`);
        } catch {
          continue;
        }
        const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
        if (inode && byInode.has(inode)) found.set(byInode.get(inode), Number(entry));
      }
      if (found.size === new Set(byInode.values()).size) break;
    }
  } catch {
    // not Linux
  }
  return found;
}

/**
 * CPU time each process spent per response, in µs: busy share × window / responses. Unlike req/s it
 * hardly depends on what else the machine was doing, so it says where a ratio to the ceiling comes from.
 * `machine` sums the processes MACHINE_PROCESSES names for the target (no load generator); `total`
 * is every process of ours.
 */
export function cpuPerResponse(cpu, seconds, responses, target = 'api') {
  const perResponse = {};
  let total = 0;
  let machine = 0;
  for (const name of OUR_PROCESSES) {
    if (cpu[name] === undefined || cpu[name] === null) continue;
    const us = responses ? ((cpu[name] / 100) * seconds * 1e6) / responses : null;
    perResponse[name] = round(us, 0);
    total += us ?? 0;
    if (MACHINE_PROCESSES[target].includes(name)) machine += us ?? 0;
  }
  perResponse.machine = responses ? round(machine, 0) : null;
  perResponse.total = responses ? round(total, 0) : null;
  return perResponse;
}

/**
 * A purchase run's costs per ACCEPTED purchase (202), until its orders were written: answers that were
 * not 202 must not dilute them.
 */
export function perAcceptedPurchase(run) {
  const accepted = run.statusCounts[202] ?? 0;
  return {
    accepted,
    redisUs: accepted ? round(run.redisCommands.totalUsec / accepted, 1) : null,
    machineCpuUs: accepted ? round((run.cpuUsPerResponse.machine * run.requests) / accepted, 0) : null,
    apiCpuUs:
      accepted && run.cpuUsPerResponse.api != null
        ? round((run.cpuUsPerResponse.api * run.requests) / accepted, 0)
        : null,
    // Over the load window (the heap meter's): nearly every answer of a live run is an accepted purchase.
    ...(run.serverHeap && {
      allocatedKb: accepted ? round(run.serverHeap.allocatedBytes / accepted / 1024, 1) : null,
    }),
  };
}

/** Server-wide `INFO commandstats` (so other users of this Redis are counted too). */
export async function redisCommandStats(redis) {
  const stats = {};
  for (const line of (await redis.info('commandstats')).split('\n')) {
    const match = line.match(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/);
    if (match) stats[match[1]] = { calls: Number(match[2]), usec: Number(match[3]) };
  }
  return stats;
}

/** Redis time per command over a run: where the single Redis thread spends it, per HTTP response. */
export function diffCommandStats(before, after, responses) {
  const rows = Object.entries(after).map(([command, { calls, usec }]) => ({
    command,
    calls: calls - (before[command]?.calls ?? 0),
    usec: usec - (before[command]?.usec ?? 0),
  }));
  const totalUsec = rows.reduce((sum, row) => sum + row.usec, 0);
  return {
    totalCalls: rows.reduce((sum, row) => sum + row.calls, 0),
    callsPerResponse: responses ? round(rows.reduce((sum, row) => sum + row.calls, 0) / responses, 3) : null,
    totalUsec,
    totalMs: round(totalUsec / 1000, 0),
    usecPerResponse: responses ? round(totalUsec / responses, 1) : null,
    top: rows
      .filter((row) => row.calls > 0)
      .sort((a, b) => b.usec - a.usec)
      .slice(0, 6)
      .map((row) => ({
        command: row.command,
        calls: row.calls,
        percent: totalUsec ? round((row.usec / totalUsec) * 100, 0) : 0,
        callsPerResponse: responses ? round(row.calls / responses, 2) : null,
      })),
  };
}

/** The commands that run a script (Lua or a function) in `INFO commandstats`. */
const SCRIPT_COMMANDS = ['evalsha', 'eval', 'fcall', 'evalsha_ro', 'eval_ro', 'fcall_ro'];

/**
 * One server's command time over a run: all of it, and the part spent running scripts; and its `WAIT`
 * calls (the durable acknowledgement's, DURABLE_ACK=replica: a master's way to know a replica has a write).
 */
export function scriptAndTotalTime(before, after) {
  const delta = (command) => (after[command]?.usec ?? 0) - (before[command]?.usec ?? 0);
  const calls = (command) => (after[command]?.calls ?? 0) - (before[command]?.calls ?? 0);
  return {
    scriptUsec: SCRIPT_COMMANDS.reduce((sum, command) => sum + delta(command), 0),
    scriptCalls: SCRIPT_COMMANDS.reduce((sum, command) => sum + calls(command), 0),
    totalUsec: Object.keys(after).reduce((sum, command) => sum + delta(command), 0),
    waitCalls: calls('wait'),
  };
}
