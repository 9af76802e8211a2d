/**
 * Free TCP ports, for the private servers and apps that `npm start` and the bench run side by side
 * with whatever else this machine runs. Node built-ins only: `npm start` uses it before `npm install`.
 */
import net from 'node:net';

/** The "bind port 0" trick: the OS picks a free port, which we release and hand to the server. */
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
