/**
 * Machines on a real network, on this one: one Linux network namespace per machine, each with its own
 * address on a bridge of its own, running real processes (`ip netns exec`). This host keeps an address
 * on the bridge too, so a browser or k6 here reaches the machines, and nothing else does: the bridge is
 * attached to no other interface, and test traffic goes only to these addresses.
 *
 * A link is cut at the receiving machine, silently, one direction at a time: a policy rule there drops
 * what arrives from the sender, so the sender sees what a partition looks like (its packets vanish, its
 * connections time out), not an error it could tell apart. Root and iproute2 (`ip`) are all it needs.
 *
 * A floating address (a service's, as keepalived's virtual IP is) is held by one machine at a time and
 * moved with `assign`: clients that name it reach whichever machine holds it, the way a promoted database
 * takes over its primary's address. A cut from a machine drops what it sends from a floating address too.
 *
 * Everything made here carries the network's id: `fs-<id>-<machine>` namespaces, `fsb-<id>` bridge,
 * `fsv-<id>-<n>` links. A run killed before it could tear down (SIGKILL) leaves an owner file naming its
 * pid; the next network made here removes what such a dead run left (`removeAbandonedNetworks`).
 */
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { findExecutable, spawnLogged } from './processes.mjs';

const run = promisify(execFile);
/** Every process started on a machine carries the network's id in this variable (a test finds them by it). */
export const MARK = 'FLASH_SALE_MACHINES';
/** Policy-rule priorities inside a machine: the cuts, then the local addresses, then the usual tables. */
const CUT_PRIORITY = 10;
const LOCAL_PRIORITY = 100;
/** Where each live network names the process that owns it. */
const OWNERS_DIR = '/run/flash-sale-machines';

/**
 * Whether machines can be made here, and if not, why (a test skips with that reason).
 * @returns {{ ok: true } | { ok: false, why: string }}
 */
export function machinesAvailable() {
  if (process.platform !== 'linux') return { ok: false, why: 'network namespaces are Linux only' };
  if (process.getuid?.() !== 0) return { ok: false, why: 'making network namespaces needs root' };
  if (!findExecutable(['ip'])) return { ok: false, why: 'iproute2 (`ip`) is not installed' };
  const probe = `fs-probe-${process.pid}`;
  try {
    execFileSync('ip', ['netns', 'add', probe], { stdio: 'pipe' });
    execFileSync('ip', ['netns', 'del', probe], { stdio: 'pipe' });
    return { ok: true };
  } catch (error) {
    return { ok: false, why: `this kernel or sandbox refuses network namespaces: ${String(error.stderr ?? error)}` };
  }
}

/**
 * @typedef {object} Machine
 * @property {string} name
 * @property {string} namespace
 * @property {string} address Its IPv4 address on the bridge.
 * @property {string} link Its end of the link to the bridge, inside its namespace.
 */

/**
 * @typedef {object} MachineNetwork
 * @property {string} id
 * @property {string} hostAddress This host's address on the bridge.
 * @property {string} subnet The bridge's /24, e.g. `10.213.7.0/24`.
 * @property {Record<string, Machine>} machines
 * @property {Record<string, { address: string, holder: string | undefined }>} floating The floating
 *   addresses by name, and the machine holding each.
 * @property {(floating: string, machine: string) => Promise<void>} assign Moves a floating address to a
 *   machine (from whichever held it), and makes every machine and this host forget where it was.
 * @property {(machine: string, command: string, args: string[], options: { logFile: string, env?: NodeJS.ProcessEnv, cwd?: string }) => { child: import('node:child_process').ChildProcess, exited: Promise<{ code: number | null, signal: string | null }> }} spawn
 *   Starts a process on a machine (logged, killed with the network; its environment has `MARK`=id).
 * @property {(machine: string, command: string, args: string[], timeoutMs?: number) => Promise<string>} exec
 *   Runs a command on a machine to its end; its stdout.
 * @property {(from: string, to: string) => Promise<void>} cut What `from` sends to `to` is lost (one direction).
 * @property {(from: string, to: string) => Promise<void>} heal Undoes `cut(from, to)`.
 * @property {(machine: string) => Promise<void>} isolate The machine's link goes down: nothing in or out.
 * @property {(machine: string) => Promise<void>} rejoin Undoes `isolate`.
 * @property {() => Promise<void>} healAll Undoes every `cut` and `isolate` in force.
 * @property {() => Promise<void>} destroy Kills every process on the machines, removes them and the bridge.
 */

/**
 * Makes the machines, each reachable from the others and from this host.
 * @param {string[]} names Machine names (letters, digits, dashes; at most 200).
 * @param {{ floating?: string[] }} [options] Names of floating addresses (held by no machine until `assign`).
 * @returns {Promise<MachineNetwork>}
 */
export async function createMachines(names, { floating: floatingNames = [] } = {}) {
  if (names.length > 200) throw new Error('at most 200 machines on one bridge');
  if (floatingNames.length > 40) throw new Error('at most 40 floating addresses on one bridge');
  for (const name of names) {
    if (!/^[a-z][a-z0-9-]{0,20}$/.test(name)) throw new Error(`machine name "${name}": lower-case letters, digits, -`);
  }
  await removeAbandonedNetworks();
  const id = randomBytes(2).toString('hex');
  const prefix = freeSubnetPrefix();
  const bridge = `fsb-${id}`;
  const hostAddress = `${prefix}.1`;
  mkdirSync(OWNERS_DIR, { recursive: true });
  writeFileSync(path.join(OWNERS_DIR, id), `${process.pid}\n`);

  /** @type {Record<string, Machine>} */
  const machines = {};
  // From the top of the /24 down, clear of the machines' (10 and up).
  const floating = Object.fromEntries(
    floatingNames.map((name, index) => [name, { address: `${prefix}.${250 - index}`, holder: undefined }]),
  );
  const network = networkOf(id);
  try {
    await ip(['link', 'add', bridge, 'type', 'bridge']);
    await ip(['addr', 'add', `${hostAddress}/24`, 'dev', bridge]);
    await ip(['link', 'set', bridge, 'up']);
    for (const [index, name] of names.entries()) {
      const namespace = `fs-${id}-${name}`;
      const outside = `fsv-${id}-${index}`;
      const inside = 'eth0';
      const address = `${prefix}.${index + 10}`;
      await ip(['netns', 'add', namespace]);
      await ip(['link', 'add', outside, 'type', 'veth', 'peer', 'name', `${outside}p`]);
      await ip(['link', 'set', `${outside}p`, 'netns', namespace]);
      await ip(['-n', namespace, 'link', 'set', `${outside}p`, 'name', inside]);
      await ip(['link', 'set', outside, 'master', bridge, 'up']);
      await ip(['-n', namespace, 'addr', 'add', `${address}/24`, 'dev', inside]);
      await ip(['-n', namespace, 'link', 'set', inside, 'up']);
      await ip(['-n', namespace, 'link', 'set', 'lo', 'up']);
      // Packets for the machine's own address are matched by the `local` table's rule, priority 0,
      // before any other: moved behind the cut rules (priority CUT_PRIORITY) so a cut can drop them.
      await ip(['-n', namespace, 'rule', 'add', 'pref', String(LOCAL_PRIORITY), 'lookup', 'local']);
      await ip(['-n', namespace, 'rule', 'del', 'pref', '0', 'lookup', 'local']);
      machines[name] = { name, namespace, address, link: inside };
    }
  } catch (error) {
    await network.destroy();
    throw error;
  }

  const machine = (name) => {
    const found = machines[name];
    if (!found) throw new Error(`no machine "${name}" (machines: ${Object.keys(machines).join(', ')})`);
    return found;
  };
  /** The addresses `name` sends from: its own, and the floating ones it holds. */
  const addressesOf = (name) => [
    machine(name).address,
    ...Object.values(floating)
      .filter(({ holder }) => holder === name)
      .map(({ address }) => address),
  ];
  /** Adds or deletes (`verb`) the policy rule on `to` that drops what arrives from `address`. */
  const dropRule = (verb, address, to) =>
    ip([
      '-n',
      machine(to).namespace,
      'rule',
      verb,
      'pref',
      String(CUT_PRIORITY),
      'from',
      `${address}/32`,
      'iif',
      machine(to).link,
      'blackhole',
    ]);
  /** Cuts already made are not made twice (two faults sharing a link): one rule is enough. */
  const addDropRule = (address, to) =>
    dropRule('add', address, to).catch((error) => {
      if (!String(error.message).includes('File exists')) throw error;
    });
  /** The directed links cut now, as `from>to`: a floating address moving carries its cuts with it. */
  const cutsInForce = new Set();
  const cutsFrom = (name) =>
    [...cutsInForce]
      .map((cut) => cut.split('>'))
      .filter(([from]) => from === name)
      .map(([, to]) => to);

  return {
    id,
    hostAddress,
    subnet: `${prefix}.0/24`,
    machines,
    floating,
    spawn: (name, command, args, options) =>
      spawnLogged('ip', ['netns', 'exec', machine(name).namespace, command, ...args], {
        ...options,
        env: { ...(options.env ?? process.env), [MARK]: id },
      }),
    exec: async (name, command, args, timeoutMs = 30_000) =>
      (await run('ip', ['netns', 'exec', machine(name).namespace, command, ...args], { timeout: timeoutMs })).stdout,
    cut: async (from, to) => {
      cutsInForce.add(`${from}>${to}`);
      for (const address of addressesOf(from)) await addDropRule(address, to);
    },
    heal: async (from, to) => {
      cutsInForce.delete(`${from}>${to}`);
      for (const address of addressesOf(from)) await dropRule('del', address, to).catch(() => undefined); // not cut
    },
    assign: async (name, to) => {
      const moving = floating[name];
      if (!moving) throw new Error(`no floating address "${name}" (floating: ${Object.keys(floating).join(', ')})`);
      machine(to);
      const from = moving.holder;
      if (from === to) return;
      if (from !== undefined) {
        await ip(['-n', machine(from).namespace, 'addr', 'del', `${moving.address}/32`, 'dev', machine(from).link]);
        for (const receiver of cutsFrom(from)) await dropRule('del', moving.address, receiver).catch(() => undefined);
      }
      await ip(['-n', machine(to).namespace, 'addr', 'add', `${moving.address}/32`, 'dev', machine(to).link]);
      moving.holder = to;
      for (const receiver of cutsFrom(to)) await addDropRule(moving.address, receiver);
      // What a gratuitous ARP does on a real network: nobody keeps sending to the old holder's link.
      for (const { namespace, link } of Object.values(machines)) {
        await ip(['-n', namespace, 'neigh', 'flush', 'to', moving.address, 'dev', link]).catch(() => undefined);
      }
      await ip(['neigh', 'flush', 'to', moving.address, 'dev', bridge]).catch(() => undefined);
    },
    isolate: async (name) => ip(['-n', machine(name).namespace, 'link', 'set', machine(name).link, 'down']),
    rejoin: async (name) => ip(['-n', machine(name).namespace, 'link', 'set', machine(name).link, 'up']),
    healAll: async () => {
      cutsInForce.clear();
      for (const { namespace, link } of Object.values(machines)) {
        // Every cut on this machine is a rule at CUT_PRIORITY: deleted one at a time until none is left.
        while (
          await ip(['-n', namespace, 'rule', 'del', 'pref', String(CUT_PRIORITY)]).then(
            () => true,
            () => false,
          )
        );
        await ip(['-n', namespace, 'link', 'set', link, 'up']);
      }
    },
    destroy: network.destroy,
  };
}

/** Removes what networks whose owner died left behind (their namespaces, processes and bridge). */
export async function removeAbandonedNetworks() {
  if (!existsSync(OWNERS_DIR)) return;
  for (const id of readdirSync(OWNERS_DIR)) {
    const owner = Number(readFileSync(path.join(OWNERS_DIR, id), 'utf8').trim());
    if (Number.isInteger(owner) && owner > 0 && processAlive(owner)) continue;
    await networkOf(id).destroy();
  }
}

/** Tearing down a network by its id alone: what exists of it is removed, whoever made it. */
function networkOf(id) {
  return {
    destroy: async () => {
      const namespaces = (await ip(['netns', 'list']))
        .split('\n')
        .map((line) => line.split(' ')[0])
        .filter((name) => name.startsWith(`fs-${id}-`));
      for (const namespace of namespaces) {
        const pids = (await ip(['netns', 'pids', namespace]).catch(() => ''))
          .split('\n')
          .map(Number)
          .filter((pid) => pid > 0);
        for (const pid of pids) killQuietly(pid);
      }
      // The processes must be gone before the namespace goes: a listener left behind keeps it alive.
      for (let i = 0; i < 100; i++) {
        const left = await Promise.all(namespaces.map((namespace) => ip(['netns', 'pids', namespace]).catch(() => '')));
        if (left.every((pids) => pids.trim() === '')) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      // Removing a namespace removes its end of each link, and so the link.
      for (const namespace of namespaces) await ip(['netns', 'del', namespace]).catch(() => undefined);
      await ip(['link', 'del', `fsb-${id}`]).catch(() => undefined);
      rmSync(path.join(OWNERS_DIR, id), { force: true });
    },
  };
}

/** A 10.213.x prefix no interface of this host uses yet. */
function freeSubnetPrefix() {
  const used = execFileSync('ip', ['-4', '-o', 'addr', 'show'], { encoding: 'utf8' });
  for (let attempt = 0; attempt < 256; attempt++) {
    const prefix = `10.213.${Math.floor(Math.random() * 256)}`;
    if (!used.includes(` ${prefix}.`)) return prefix;
  }
  throw new Error('no free 10.213.x.0/24 subnet on this host');
}

async function ip(args) {
  try {
    return (await run('ip', args)).stdout;
  } catch (error) {
    throw new Error(`ip ${args.join(' ')}: ${String(error.stderr || error.message).trim()}`);
  }
}

function processAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

function killQuietly(pid) {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}
