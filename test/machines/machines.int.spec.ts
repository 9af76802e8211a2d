import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '../support/fixtures';
import { createMachines, MARK, machinesAvailable, type MachineNetwork } from '../../scripts/lib/machines.mjs';
import { processesWithEnv } from '../support/process-table';

const available = machinesAvailable();
const describeWithMachines = available.ok ? describe : describe.skip;
if (!available.ok) console.warn(`machines.int.spec skipped: ${available.why}`);

/** What `from` hears of `to`: a TCP connection to a listener there, or none within the timeout. */
const NODE_CONNECT = `
const [host, port] = process.argv.slice(1);
const socket = require('node:net').connect({ host, port: Number(port) });
const timer = setTimeout(() => { console.log('timeout'); process.exit(0); }, 1000);
socket.on('connect', () => { console.log('connected'); clearTimeout(timer); socket.destroy(); });
socket.on('error', (error) => { console.log('error ' + error.code); clearTimeout(timer); });`;
/** Sends 20 UDP datagrams to `to`; the listener counts them. */
const NODE_SEND_UDP = `
const [host, port] = process.argv.slice(1);
const socket = require('node:dgram').createSocket('udp4');
let sent = 0;
const send = () => socket.send('x', Number(port), host, () => (++sent < 20 ? send() : socket.close()));
send();`;
/** Listens on TCP 7000 and UDP 7001, counting datagrams; prints the count on SIGTERM. */
const NODE_LISTEN = `
require('node:net').createServer((socket) => socket.destroy()).listen(7000, '0.0.0.0');
let datagrams = 0;
require('node:dgram').createSocket('udp4').on('message', () => datagrams++).bind(7001, '0.0.0.0', () => console.log('listening'));
process.on('SIGTERM', () => { console.log('datagrams ' + datagrams); process.exit(0); });`;

const namespacesOf = (id: string) =>
  execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.startsWith(`fs-${id}-`));
const linksOf = (id: string) =>
  execFileSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(`-${id}`));

describeWithMachines('machines on a real network (network namespaces, a bridge, policy rules)', () => {
  let network: MachineNetwork;

  beforeAll(async () => {
    network = await createMachines(['alpha', 'beta']);
  }, 60_000);

  afterAll(async () => {
    await network?.destroy();
  });

  const connect = async (from: string, to: string) =>
    (await network.exec(from, process.execPath, ['-e', NODE_CONNECT, network.machines[to]!.address, '7000'])).trim();

  /** Datagrams `to` heard of 20 that `from` sent. */
  const datagrams = async (from: string, to: string) => {
    const logFile = join(tmpdir(), `machines-spec-${network.id}-${to}.log`);
    const listener = network.spawn(to, process.execPath, ['-e', NODE_LISTEN], { logFile });
    try {
      await waitFor(
        'the listener',
        async () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''),
        (text) => text.includes('listening'),
      );
      await network.exec(from, process.execPath, ['-e', NODE_SEND_UDP, network.machines[to]!.address, '7001']);
      await new Promise((resolve) => setTimeout(resolve, 300));
      listener.child.kill('SIGTERM');
      await listener.exited;
      return Number(/datagrams (\d+)/.exec(readFileSync(logFile, 'utf8'))?.[1]);
    } finally {
      listener.child.kill('SIGKILL');
      rmSync(logFile, { force: true });
    }
  };

  it('each machine has its own address; they reach each other, and this host reaches them', async () => {
    const { alpha, beta } = network.machines;
    expect(alpha!.address).not.toBe(beta!.address);
    const listener = network.spawn('beta', process.execPath, ['-e', NODE_LISTEN], { logFile: '/dev/null' });
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await connect('alpha', 'beta')).toBe('connected');
      // Each machine has its own loopback and ports: nothing listens on alpha's 7000.
      expect(await connect('alpha', 'alpha')).toMatch(/^error ECONNREFUSED|^timeout/);
    } finally {
      listener.child.kill('SIGKILL');
      await listener.exited;
    }
  }, 30_000);

  it('a cut loses one direction silently; heal restores it', async () => {
    expect(await datagrams('alpha', 'beta')).toBe(20);
    await network.cut('alpha', 'beta');
    try {
      expect(await datagrams('alpha', 'beta')).toBe(0);
      // The other direction still carries.
      expect(await datagrams('beta', 'alpha')).toBe(20);
      // A TCP connection needs both: the sender's SYN vanishes, it hears no refusal, only silence.
      const listener = network.spawn('beta', process.execPath, ['-e', NODE_LISTEN], { logFile: '/dev/null' });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await connect('alpha', 'beta')).toBe('timeout');
      listener.child.kill('SIGKILL');
      await listener.exited;
    } finally {
      await network.heal('alpha', 'beta');
    }
    expect(await datagrams('alpha', 'beta')).toBe(20);
  }, 60_000);

  it('an isolated machine hears nothing and is heard by no one until it rejoins', async () => {
    await network.isolate('beta');
    try {
      expect(await datagrams('alpha', 'beta')).toBe(0);
      expect(await datagrams('beta', 'alpha')).toBe(0);
    } finally {
      await network.rejoin('beta');
    }
    expect(await datagrams('alpha', 'beta')).toBe(20);
  }, 60_000);

  it('destroy kills what runs on the machines and leaves no namespace, link or bridge', async () => {
    const other = await createMachines(['gamma']);
    const sleeper = other.spawn('gamma', 'sleep', ['600'], { logFile: '/dev/null' });
    expect(namespacesOf(other.id)).toHaveLength(1);
    await other.destroy();
    await sleeper.exited;
    expect(namespacesOf(other.id)).toEqual([]);
    expect(linksOf(other.id)).toEqual([]);
    expect(processesWithEnv(MARK, other.id)).toEqual([]);
  }, 60_000);
});
