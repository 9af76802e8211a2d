/**
 * A private MySQL or MariaDB server for `npm start` when none answers: its data under .data/mysql, root
 * reachable over TCP with an empty password. Node built-ins only.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, renameSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './ports.mjs';
import { mysqlAnswers } from './probes.mjs';
import { findExecutable, shortPath, spawnServer, tail, waitForReady } from './processes.mjs';

/**
 * The installed server binaries, or null when they are missing: MariaDB first (on Debian `mysqld` is
 * usually a symlink to it anyway); MariaDB needs its install-db tool to create a data directory.
 */
export function findMysqlServer() {
  const server = findExecutable(['mariadbd', 'mysqld']);
  if (!server) return null;
  const mariadb = /mariadb/i.test(spawnSync(server, ['--version'], { encoding: 'utf8' }).stdout ?? '');
  const installDb = mariadb ? findExecutable(['mariadb-install-db', 'mysql_install_db']) : null;
  if (mariadb && !installDb) return null;
  return { server, mariadb, installDb };
}

/** Starts the server `findMysqlServer` found, on a free port, and resolves once it greets. */
export async function startMysqlServer(binaries, databaseName, dataDir, log, onUnexpectedExit) {
  const datadir = path.join(dataDir, 'mysql');
  const logFile = path.join(dataDir, 'mysql.log');
  mkdirSync(dataDir, { recursive: true });
  // mariadbd/mysqld refuse to run as root unless told to explicitly.
  const asRoot = process.getuid?.() === 0 ? ['--user=root'] : [];
  if (!existsSync(datadir)) initialiseMysql(binaries, datadir, logFile, asRoot, log);

  const port = await freePort();
  const url = `mysql://root@127.0.0.1:${port}/${databaseName}`;
  log(`MySQL: starting a private ${path.basename(binaries.server)} on port ${port} (data in ${shortPath(datadir)})`);
  const args = [
    '--no-defaults', // ignore /etc/mysql/my.cnf: it names the system instance's socket, pid file and user
    `--datadir=${datadir}`,
    `--port=${port}`,
    '--bind-address=127.0.0.1',
    `--socket=${socketPath(dataDir, port)}`,
    `--pid-file=${path.join(dataDir, 'mysql.pid')}`,
    ...asRoot,
    // Every API process pools up to 20 connections and every worker 8; one API process per core can
    // pass the default 151 on a large machine.
    '--max-connections=1000',
    // Oracle MySQL also opens the X protocol on 33060, which would clash with a system instance.
    ...(binaries.mariadb ? [] : ['--mysqlx=OFF']),
  ];
  const instance = spawnServer('mysql', binaries.server, args, logFile, onUnexpectedExit);
  await waitForReady(
    instance,
    () => mysqlAnswers(url),
    60_000,
    'if a previous run was killed, its server may still hold .data/mysql; see .data/mysql.pid',
  );
  return { url, stop: instance.stop };
}

/**
 * Creates the system tables once, with root reachable over TCP with an empty password.
 * It initialises into a temporary directory and renames it on success, so an interrupted
 * first run never leaves a half-initialised datadir that would then be mistaken for a good one.
 */
function initialiseMysql(binaries, datadir, logFile, asRoot, log) {
  const staging = `${datadir}.initialising`;
  rmSync(staging, { recursive: true, force: true });
  log(`MySQL: initialising a new data directory (once) in ${shortPath(datadir)}`);
  const [command, args] = binaries.mariadb
    ? [
        binaries.installDb,
        [
          '--no-defaults',
          `--datadir=${staging}`,
          '--auth-root-authentication-method=normal',
          '--skip-test-db',
          ...asRoot,
        ],
      ]
    : [binaries.server, ['--no-defaults', '--initialize-insecure', `--datadir=${staging}`, ...asRoot]];
  const out = openSync(logFile, 'a');
  const result = spawnSync(command, args, { stdio: ['ignore', out, out] });
  closeSync(out);
  if (result.status !== 0) {
    throw new Error(`${path.basename(command)} failed (exit ${result.status ?? result.signal}):\n${tail(logFile)}`);
  }
  renameSync(staging, datadir);
}

/** Unix socket paths are limited to ~104 bytes; a deep checkout would exceed that. */
function socketPath(dataDir, port) {
  const preferred = path.join(dataDir, 'mysql.sock');
  return preferred.length < 100 ? preferred : path.join(os.tmpdir(), `flash-sale-mysql-${port}.sock`);
}
