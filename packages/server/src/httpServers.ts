import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Listens on `host:port` (0: a free port) with keep-alive longer than a load balancer's idle timeout. */
export async function listenOn(server: Server, port: number, host: string): Promise<Server> {
  server.keepAliveTimeout = 65_000;
  // Once closing, a keep-alive connection is closed as soon as its response is out (see closeGracefully).
  server.on('request', (_req, res) => {
    res.once('finish', () => {
      if (!server.listening) setImmediate(() => server.closeIdleConnections());
    });
  });
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(port, host, () => done());
  });
  return server;
}

export function urlOf(host: string, server: Server, scheme: 'http' | 'https' = 'http'): string {
  const { port } = server.address() as AddressInfo;
  return `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * Stops accepting, lets in-flight requests finish (each keep-alive connection is closed once its
 * response is out, idle ones at once) and cuts whatever is left after `graceMs`.
 */
export function closeGracefully(server: Server, graceMs: number): Promise<void> {
  return new Promise<void>((done) => {
    const force = setTimeout(() => server.closeAllConnections(), graceMs);
    server.close(() => {
      clearTimeout(force);
      done();
    });
    server.closeIdleConnections();
  });
}
