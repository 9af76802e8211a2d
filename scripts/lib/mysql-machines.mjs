/**
 * MariaDB on two machines of a machine network (machines.mjs): a primary and a replica that copies it,
 * reached by the apps at two floating addresses — `mysql`, always the primary's, and `mysql-replica`,
 * the replica's — so a failover moves an address, not the apps' settings (docs/operations.md, "MySQL
 * on two machines").
 *
 * Replication is semi-synchronous by default: the primary commits a transaction (and answers the client)
 * only once the replica has it in its relay log (`AFTER_SYNC`). A primary whose replica is away holds its
 * commits for SEMI_SYNC_WAIT_MS, then goes on asynchronously until the replica has caught up; a failover
 * is refused meanwhile (an orchestrator's rule: only a replica the primary was waiting for is promoted).
 * So every commit a client was told of is on a replica that may be promoted, and promoting it loses none.
 * `replication: 'async'` is there to show what the promise rests on: a failover can then lose commits the
 * workers were told of.
 *
 * A failover is what an operator (or an orchestrator) does when the primary is lost: the old primary is
 * fenced (its process killed, or its machine cut off), the replica applies everything it received and
 * becomes the primary, and both addresses move to it. `restore` then rebuilds the fenced machine as the
 * new primary's replica, from a dump, and gives it the replica's address; and, failover or not, it makes
 * sure the primary waits for its replica again (below, semiSyncRestored).
 */
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { createConnection } from 'mysql2/promise';
import { waitFor } from './processes.mjs';

export const MYSQL_MACHINES = ['mysql-1', 'mysql-2'];
export const MYSQL_FLOATING = { primary: 'mysql', replica: 'mysql-replica' };
/**
 * How long a semi-synchronous primary holds a commit for its replica's receipt before it goes on
 * asynchronously (MariaDB's default): longer than the replica takes to notice a dead link and reconnect,
 * short enough that a replica lost for good stalls the writes seconds, not for as long as it is away.
 */
export const SEMI_SYNC_WAIT_MS = 10_000;
/** A replica cut off finds out within seconds (heartbeats every second) and reconnects every second. */
const REPLICA_NET_TIMEOUT_S = 4;

/**
 * @typedef {object} MysqlPair
 * @property {() => { primary: string, replica: string | undefined, fenced: string | undefined }} roles
 *   Which machine is which now (`replica` undefined from a failover until `restore`).
 * @property {(fence: 'kill' | 'isolate') => Promise<{ promoted: string, fenced: string } | { refused: string }>} failover
 * @property {() => Promise<void>} restore Rebuilds a fenced machine as the primary's replica (if one is), and
 *   has the primary wait for its replica again (semi-synchronous replication).
 */

/**
 * Starts both servers, the primary on mysql-1, the replica on mysql-2 copying it from the start, and
 * assigns the floating addresses.
 * @param {import('./machines.mjs').MachineNetwork} network
 * @param {{ mariadbd: string, installDb: string, mariadb: string, mariadbDump: string }} binaries
 * @param {string} dir
 * @param {{ replication?: 'semi-sync' | 'async' }} [options]
 * @returns {Promise<MysqlPair>}
 */
export async function startMysqlPair(network, binaries, dir, { replication = 'semi-sync' } = {}) {
  const semiSync = replication === 'semi-sync';
  const servers = Object.fromEntries(
    MYSQL_MACHINES.map((machine, index) => {
      const dataDir = path.join(dir, machine);
      return [machine, { machine, dataDir, socket: path.join(dataDir, 'mysql.sock'), serverId: index + 1 }];
    }),
  );
  // One after the other, each in a temporary folder of its own: two bootstraps at once in one /tmp
  // have been seen to trip over each other's temporary tables.
  for (const server of Object.values(servers)) await installDataDir(binaries, server);
  for (const server of Object.values(servers)) await startServer(network, binaries, dir, server, semiSync);

  const roles = { primary: 'mysql-1', replica: 'mysql-2', fenced: undefined };
  // Made on the primary, so the replica gets them by replication too: the apps (and this host) reach
  // root over the network, the replica its copy as `repl`.
  await overSocket(servers['mysql-1'], (connection) =>
    connection.query(
      `CREATE USER 'root'@'%'; GRANT ALL ON *.* TO 'root'@'%' WITH GRANT OPTION;
       CREATE USER 'repl'@'%' IDENTIFIED BY 'repl'; GRANT REPLICATION SLAVE ON *.* TO 'repl'@'%';
       SET GLOBAL read_only = OFF;`,
    ),
  );
  await follow(network, servers['mysql-2'], 'mysql-1', '');
  if (semiSync) await awaitSemiSync(servers['mysql-1']);
  await network.assign(MYSQL_FLOATING.primary, 'mysql-1');
  await network.assign(MYSQL_FLOATING.replica, 'mysql-2');

  return {
    roles: () => ({ ...roles }),

    failover: async (fence) => {
      if (roles.replica === undefined) return { refused: 'no replica to promote (the last failover is not restored)' };
      const old = servers[roles.primary];
      const promoted = servers[roles.replica];
      // An orchestrator's rule: promote only a replica the primary was waiting for, or it may lack commits
      // a client was told of. (Asynchronous replication promises nothing of the sort: promoted anyway.)
      if (semiSync && !(await semiSyncOn(old))) {
        return { refused: `${old.machine} was not waiting for its replica (semi-synchronous replication off)` };
      }
      if (fence === 'kill') {
        old.child.kill('SIGKILL');
        await old.exited;
      } else {
        await network.isolate(old.machine);
      }
      await overSocket(promoted, async (connection) => {
        // Everything it received, applied; then nothing more to follow.
        await connection.query('STOP SLAVE IO_THREAD');
        const [[status]] = await connection.query('SHOW SLAVE STATUS');
        await connection.query('SELECT MASTER_GTID_WAIT(?, 60)', [status?.Gtid_IO_Pos ?? '']);
        await connection.query('STOP SLAVE; RESET SLAVE ALL');
        // No replica to wait for until `restore` gives it one.
        await connection.query('SET GLOBAL rpl_semi_sync_master_enabled = OFF; SET GLOBAL read_only = OFF');
      });
      await network.assign(MYSQL_FLOATING.primary, promoted.machine);
      await network.assign(MYSQL_FLOATING.replica, promoted.machine);
      roles.fenced = old.machine;
      roles.primary = promoted.machine;
      roles.replica = undefined;
      return { promoted: promoted.machine, fenced: old.machine };
    },

    restore: async () => {
      if (roles.fenced === undefined) {
        if (semiSync) await semiSyncRestored(servers[roles.primary], servers[roles.replica]);
        return;
      }
      const rebuilt = servers[roles.fenced];
      const primary = servers[roles.primary];
      if (rebuilt.child.exitCode === null && rebuilt.child.signalCode === null) {
        rebuilt.child.kill('SIGKILL');
        await rebuilt.exited;
      }
      await network.rejoin(rebuilt.machine);
      rmSync(rebuilt.dataDir, { recursive: true, force: true });
      await installDataDir(binaries, rebuilt);
      await startServer(network, binaries, dir, rebuilt, semiSync);
      const position = await copyDatabase(binaries, primary, rebuilt);
      await follow(network, rebuilt, primary.machine, position);
      if (semiSync) await awaitSemiSync(primary);
      await network.assign(MYSQL_FLOATING.replica, rebuilt.machine);
      roles.replica = rebuilt.machine;
      roles.fenced = undefined;
    },
  };
}

async function installDataDir(binaries, { dataDir }) {
  mkdirSync(path.join(dataDir, 'tmp'), { recursive: true });
  await execute(binaries.installDb, [
    '--no-defaults',
    `--datadir=${path.join(dataDir, 'data')}`,
    `--tmpdir=${path.join(dataDir, 'tmp')}`,
    '--auth-root-authentication-method=normal',
    '--skip-test-db',
    '--user=root',
  ]);
}

/** Starts a server read-only (a replica until made the primary) and waits until it answers on its socket. */
async function startServer(network, binaries, dir, server, semiSync) {
  const { machine, dataDir, socket, serverId } = server;
  const logFile = path.join(dir, `${machine}.log`);
  // prettier-ignore
  const args = ['--no-defaults', `--datadir=${path.join(dataDir, 'data')}`, '--port=3306',
    `--bind-address=0.0.0.0`, `--socket=${socket}`,
    `--pid-file=${path.join(dataDir, 'mysql.pid')}`, `--tmpdir=${path.join(dataDir, 'tmp')}`, '--user=root',
    `--server-id=${serverId}`,
    // Replicated transactions go to its own binlog too, with their GTIDs: promoted, it is a whole primary.
    '--log-bin=mysql-bin', '--binlog-format=ROW', '--log-slave-updates', '--max-connections=1000',
    // No DNS on these machines: a reverse lookup of each client would stall its greeting.
    '--skip-name-resolve', '--read-only=ON', `--slave-net-timeout=${REPLICA_NET_TIMEOUT_S}`,
    ...(semiSync
      ? ['--rpl-semi-sync-slave-enabled=ON', '--rpl-semi-sync-master-wait-point=AFTER_SYNC',
          `--rpl-semi-sync-master-timeout=${SEMI_SYNC_WAIT_MS}`]
      : [])];
  const { child, exited } = network.spawn(machine, binaries.mariadbd, args, { logFile });
  Object.assign(server, { child, exited });
  // Over its socket: only root@localhost exists until the primary's users are there.
  await waitFor(`MariaDB on ${machine}`, () => overSocket(server, () => true, 1_000), { exited, logFile });
}

/**
 * `use` with a connection to `server` over its socket (this host reaches it whatever the network's state).
 * The default wait for its greeting is long: a primary whose semi-synchronous replication is being
 * switched back on while commits wait for their replica greets nobody, over TCP or its socket, until that
 * settles (tens of seconds, seen after a split healed).
 */
async function overSocket({ socket }, use, connectTimeout = 60_000) {
  const connection = await createConnection({
    socketPath: socket,
    user: 'root',
    multipleStatements: true,
    connectTimeout,
  });
  try {
    return await use(connection);
  } finally {
    await connection.end().catch(() => connection.destroy());
  }
}

/** `replica` copies `primaryMachine` from GTID position `position` (`''`: from its first transaction). */
async function follow(network, replica, primaryMachine, position) {
  await overSocket(replica, (connection) =>
    connection.query(
      `SET GLOBAL gtid_slave_pos = ?;
       CHANGE MASTER TO MASTER_HOST = ?, MASTER_PORT = 3306, MASTER_USER = 'repl', MASTER_PASSWORD = 'repl',
         MASTER_USE_GTID = slave_pos, MASTER_CONNECT_RETRY = 1, MASTER_HEARTBEAT_PERIOD = 1;
       START SLAVE;`,
      [position, network.machines[primaryMachine].address],
    ),
  );
}

async function semiSyncOn(server) {
  return overSocket(server, async (connection) => {
    const [rows] = await connection.query(
      "SHOW GLOBAL STATUS WHERE Variable_name IN ('Rpl_semi_sync_master_status', 'Rpl_semi_sync_master_clients')",
    );
    const status = Object.fromEntries(rows.map(({ Variable_name, Value }) => [Variable_name, Value]));
    return status.Rpl_semi_sync_master_status === 'ON' && Number(status.Rpl_semi_sync_master_clients) > 0;
  }).catch(() => false);
}

/**
 * The primary waits for its replica again, after a partition: on its own, once the replica has reconnected
 * and caught up. But MariaDB has been seen to stay without a semi-synchronous client after a cut between the
 * two healed — the replica's I/O thread reconnecting every few seconds, each new binlog dump on the primary
 * stuck `starting` — so that every commit waited out SEMI_SYNC_WAIT_MS and went on unprotected, and a
 * failover was refused from then on. Turning the primary's semi-synchronous side off and on again, and
 * reconnecting the replica, clears it (what an orchestrator does when the wait does not come back).
 */
async function semiSyncRestored(primary, replica) {
  if (await waitedFor(primary, 10_000)) return;
  await overSocket(primary, (connection) =>
    connection.query('SET GLOBAL rpl_semi_sync_master_enabled = OFF; SET GLOBAL rpl_semi_sync_master_enabled = ON'),
  );
  await overSocket(replica, (connection) => connection.query('STOP SLAVE IO_THREAD; START SLAVE IO_THREAD'));
  await awaitSemiSync(primary);
  // The commits that went on unprotected meanwhile: on the replica before a failover may promote it.
  const [[{ position }]] = await overSocket(primary, (connection) =>
    connection.query('SELECT @@gtid_binlog_pos AS position'),
  );
  await overSocket(replica, (connection) => connection.query('SELECT MASTER_GTID_WAIT(?, 30)', [position]));
}

/** Whether the primary waits for its replica (semiSyncOn) within `withinMs`. */
async function waitedFor(primary, withinMs) {
  const until = Date.now() + withinMs;
  while (!(await semiSyncOn(primary))) {
    if (Date.now() >= until) return false;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return true;
}

async function awaitSemiSync(primary) {
  await overSocket(primary, (connection) => connection.query('SET GLOBAL rpl_semi_sync_master_enabled = ON'));
  await waitFor(`${primary.machine}'s replica to acknowledge semi-synchronously`, () => semiSyncOn(primary), {
    timeoutMs: 30_000,
  });
}

/**
 * The primary's users and the app's database copied into `replica`, consistent at one GTID position
 * (returned), without writing to the replica's binlog; its binlog then starts where the primary's stood,
 * so once promoted it numbers its transactions on from there.
 */
async function copyDatabase(binaries, primary, replica) {
  await overSocket(replica, (connection) =>
    connection.query(
      `SET sql_log_bin = 0;
       CREATE USER 'root'@'%'; GRANT ALL ON *.* TO 'root'@'%' WITH GRANT OPTION;
       CREATE USER 'repl'@'%' IDENTIFIED BY 'repl'; GRANT REPLICATION SLAVE ON *.* TO 'repl'@'%';`,
    ),
  );
  const dump = await execute(binaries.mariadbDump, [
    `--socket=${primary.socket}`,
    '--user=root',
    '--single-transaction',
    '--master-data=2',
    '--gtid',
    '--databases',
    'flash_sale',
  ]);
  const position = /gtid_slave_pos='([^']*)'/.exec(dump)?.[1];
  if (position === undefined) throw new Error(`the dump of ${primary.machine} names no GTID position`);
  await execute(binaries.mariadb, [`--socket=${replica.socket}`, '--user=root'], `SET sql_log_bin = 0;\n${dump}`);
  await overSocket(replica, (connection) =>
    connection.query('RESET MASTER; SET GLOBAL gtid_binlog_state = ?', [position]),
  );
  return position;
}

/** Runs a command to its end (its stdin `input`), and resolves to its stdout; rejects with its stderr. */
function execute(command, args, input = '') {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const out = [];
    let err = '';
    child.stdout.on('data', (chunk) => out.push(chunk));
    child.stderr.on('data', (chunk) => (err += chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve(Buffer.concat(out).toString('utf8'))
        : reject(new Error(`${path.basename(command)} exited ${code}: ${err.trim()}`)),
    );
    child.stdin.end(input);
  });
}
