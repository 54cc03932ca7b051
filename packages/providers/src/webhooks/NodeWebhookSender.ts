import { lookup as dnsLookup } from 'node:dns';
import { promises as dns } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import {
  isPrivateAddress,
  RESPONSE_EXCERPT_BYTES,
  type WebhookRequest,
  type WebhookResponse,
  type WebhookSender,
} from '@trellis/core';

class AddressRefusedError extends Error {}

/**
 * A lookup that checks every address a hostname resolves to at the moment the socket connects,
 * so a name that resolved to a public address when the notification was saved cannot be rebound
 * to a private one for the delivery.
 */
function checkedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const list = addresses as unknown as { address: string; family: number }[];
      if (!allowPrivate && (list.length === 0 || list.some((entry) => isPrivateAddress(entry.address)))) {
        return callback(
          new AddressRefusedError(`${hostname} resolves to a private, loopback or link-local address`),
          '',
          0,
        );
      }
      if (options.all) return (callback as unknown as (e: null, a: typeof list) => void)(null, list);
      const first = list[0];
      if (!first) return callback(new Error(`${hostname} did not resolve`), '', 0);
      callback(null, first.address, first.family);
    });
  };
}

/**
 * Notifications over Node's own HTTP client: no redirects followed (a 3xx is an answer), a
 * deadline for the whole exchange, only the first bytes of the answer read, and every address
 * connected to checked, in whatever family or spelling (`isPrivateAddress`): an IP literal in the
 * URL before connecting, each address a name resolves to as the socket connects (so a name
 * rebound since the URL was saved is caught), and the socket's own remote address once connected
 * (what a dual-stack socket reports as `::ffff:a.b.c.d` included), which drops the connection.
 */
export class NodeWebhookSender implements WebhookSender {
  async resolve(hostname: string): Promise<string[]> {
    if (isIP(hostname)) return [hostname];
    const found = await dns.lookup(hostname, { all: true, verbatim: true });
    return found.map((entry) => entry.address);
  }

  send(request: WebhookRequest): Promise<WebhookResponse> {
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return Promise.resolve({ kind: 'refused', error: 'the URL is not valid' });
    }
    const literal = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(literal) && !request.allowPrivateAddresses && isPrivateAddress(literal)) {
      return Promise.resolve({ kind: 'refused', error: `${literal} is a private, loopback or link-local address` });
    }
    const client = url.protocol === 'https:' ? https : url.protocol === 'http:' ? http : null;
    if (client === null) return Promise.resolve({ kind: 'refused', error: `${url.protocol} is not allowed` });
    return new Promise<WebhookResponse>((resolve) => {
      let settled = false;
      const finish = (response: WebhookResponse) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        resolve(response);
      };
      const body = Buffer.from(request.body, 'utf8');
      const outgoing = client.request(
        url,
        {
          method: 'POST',
          headers: { ...request.headers, 'content-length': String(body.length) },
          lookup: checkedLookup(request.allowPrivateAddresses),
          agent: false,
        },
        (incoming) => {
          const chunks: Buffer[] = [];
          let size = 0;
          incoming.on('data', (chunk: Buffer) => {
            if (size < RESPONSE_EXCERPT_BYTES) chunks.push(chunk);
            size += chunk.length;
            if (size >= RESPONSE_EXCERPT_BYTES) incoming.destroy();
          });
          const done = () =>
            finish({
              kind: 'answered',
              status: incoming.statusCode ?? 0,
              excerpt: Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES).toString('utf8'),
            });
          incoming.on('end', done);
          incoming.on('close', done);
          incoming.on('error', done);
        },
      );
      const deadline = setTimeout(() => {
        outgoing.destroy(new Error(`no answer within ${request.timeoutMs} ms`));
      }, request.timeoutMs);
      if (!request.allowPrivateAddresses) {
        outgoing.on('socket', (socket) => {
          socket.once('connect', () => {
            const remote = socket.remoteAddress;
            if (remote === undefined || isPrivateAddress(remote)) {
              outgoing.destroy(new AddressRefusedError(`${url.hostname} connected to a private address`));
            }
          });
        });
      }
      outgoing.on('error', (error) => {
        finish(
          error instanceof AddressRefusedError
            ? { kind: 'refused', error: error.message }
            : { kind: 'failed', error: error.message },
        );
      });
      outgoing.end(body);
    });
  }
}
