/**
 * The load generator's HTTP client for the throughput scenarios: node:http with a keep-alive
 * agent, sending exactly what TrellisClient sends (worker headers, JSON bodies).
 *
 * Why not TrellisClient itself: on this kind of machine fetch tops out near 1,500 requests/s, so
 * against a bare node:http server it would measure fetch, not the server, and every ratio to such a
 * baseline would flatter the control plane. node:http here reaches several times that. The
 * scenarios that need what only TrellisClient does (SSE, streamed uploads) still use it.
 */
import { Agent, request } from 'node:http';

/** A client for one base URL; `sockets` is the most connections it keeps (the concurrency). */
export function loadClient(baseUrl, { sockets }) {
  const url = new URL(baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: sockets });

  /** Sends one request; resolves `{ status, headers, body }` with the body parsed when it is JSON. */
  function send(method, path, { headers = {}, json } = {}) {
    const payload = json === undefined ? undefined : JSON.stringify(json);
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path,
          method,
          agent,
          headers: {
            Accept: 'application/json',
            'User-Agent': 'trellis-bench',
            ...(payload === undefined
              ? {}
              : { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) }),
            ...headers,
          },
        },
        (res) => {
          const parts = [];
          res.on('data', (part) => parts.push(part));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(parts).toString('utf8');
            const isJson = /json/.test(String(res.headers['content-type'])) && text !== '';
            try {
              resolve({ status: res.statusCode, headers: res.headers, body: isJson ? JSON.parse(text) : text });
            } catch (error) {
              reject(error);
            }
          });
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  }

  /** Like `send`, but anything other than the expected status is an error naming the answer. */
  async function expect(status, method, path, options) {
    const answer = await send(method, path, options);
    const expected = Array.isArray(status) ? status : [status];
    if (!expected.includes(answer.status)) {
      const detail = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
      throw new Error(`${method} ${path} answered ${answer.status}: ${detail.slice(0, 300)}`);
    }
    return answer;
  }

  return { send, expect, close: () => agent.destroy() };
}

/** The headers an agent authenticates with (SPEC §5.4). */
export function workerHeaders(agent) {
  return { 'X-Worker-ID': agent.workerId, 'X-Worker-Token': agent.workerToken };
}
