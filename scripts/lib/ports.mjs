/**
 * Free TCP ports, for the private servers and apps that `npm start`, the bench and the tests run side
 * by side with whatever else this machine runs. Node built-ins only: `npm start` uses it before
 * `npm install`.
 */
import net from 'node:net';

/**
 * The "bind port 0" trick: the OS picks a free port, which we release and hand to the server.
 * @returns {Promise<number>}
 */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Whether nothing listens on `port` of `host` yet (binding it for a moment tells).
 * @param {number} port
 * @returns {Promise<boolean>}
 */
export function portIsFree(port, host = '127.0.0.1') {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}
