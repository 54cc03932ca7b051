import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A body declared at most this long is small: it must arrive whole within `SMALL_BODY_DEADLINE_MS`. */
export const SMALL_BODY_BYTES = 1024 * 1024;
/** Node's own `requestTimeout` default, kept for small bodies (a client trickling a form is cut). */
const SMALL_BODY_DEADLINE_MS = 300_000;

export interface ListenOptions {
  /**
   * A large body (declared longer than `SMALL_BODY_BYTES`, or chunked) is cut only when nothing of
   * it arrives this long: a plan or state upload on a slow link takes as long as it takes.
   */
  bodyIdleMs: number;
}

/**
 * Listens on `host:port` (0: a free port) with keep-alive longer than a load balancer's idle
 * timeout. Node cuts a request that takes longer than `requestTimeout` (5 minutes) to arrive
 * whole; that stays so for small bodies, while a large body is cut only when it stalls
 * (`bodyIdleMs`): a 20 MB plan at 20 KB/s needs 17 minutes, and arrives.
 */
export async function listenOn(server: Server, port: number, host: string, options: ListenOptions): Promise<Server> {
  server.keepAliveTimeout = 65_000;
  server.requestTimeout = 0;
  server.on('request', (req, res) => watchBody(req, res, options.bodyIdleMs));
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

/**
 * Cuts a request whose body stops arriving: a small one not whole within 5 minutes from the
 * request, a large one silent for `idleMs` (the socket's inactivity timer, which counts the bytes
 * the parser reads). Both are disarmed once the body is whole or the request is gone.
 */
function watchBody(req: IncomingMessage, res: ServerResponse, idleMs: number): void {
  // A request has a body only with a Content-Length or a Transfer-Encoding (RFC 9112 §6.1).
  const hasBody = req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
  if (req.complete || !hasBody) return;
  const declared = Number(req.headers['content-length']);
  const small = Number.isFinite(declared) && declared <= SMALL_BODY_BYTES;
  const { socket } = req;
  const cut = () => {
    if (!req.complete) socket.destroy();
  };
  let deadline: NodeJS.Timeout | null = null;
  if (small) {
    deadline = setTimeout(cut, SMALL_BODY_DEADLINE_MS);
    deadline.unref();
  } else {
    socket.setTimeout(idleMs);
    socket.on('timeout', cut);
  }
  const disarm = () => {
    if (deadline) clearTimeout(deadline);
    else {
      // Once the response is out, Node has set the connection's keep-alive timeout: that one stays.
      if (!res.writableFinished) socket.setTimeout(0);
      socket.off('timeout', cut);
    }
    req.off('end', disarm);
    req.off('close', disarm);
  };
  req.once('end', disarm);
  req.once('close', disarm);
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
