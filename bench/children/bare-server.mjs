/**
 * The "bare node:http" baseline: a server with no framework, no authentication and no database
 * that answers the routes under test with bodies of the same shape, so the very same client code
 * (TrellisClient) can drive it. What the control plane costs beyond this is its own work.
 *
 * - POST /api/workers/heartbeat       -> 200 {"cancel_job_ids":[],"heartbeat_interval_s":30}
 * - GET  /api/jobs/{id}/logs/stream   -> SSE: a `status` event, then every posted chunk as `log`
 * - POST /api/jobs/{id}/logs          -> 201 {id, job_status}, the chunk fanned out to the streams
 * - PUT  /api/jobs/{id}/status        -> 200, `end` on every stream, streams closed
 * - POST /api/jobs/{id}/plan-artifact -> 201 {job_id, size, sha256: ""} once the body is drained
 */
import { createServer } from 'node:http';

const HEARTBEAT_ANSWER = JSON.stringify({ cancel_job_ids: [], heartbeat_interval_s: 30 });
const streams = new Set();
let nextChunkId = 1;

function readJson(req) {
  return new Promise((resolve, reject) => {
    const parts = [];
    req.on('data', (part) => parts.push(part));
    req.on('end', () => {
      try {
        resolve(parts.length === 0 ? {} : JSON.parse(Buffer.concat(parts).toString('utf8')));
      } catch (error) {
        reject(error);
      }
    });
    req.on('error', reject);
  });
}

function sendJson(res, status, body) {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(text);
}

function sendEvent(res, event, data, id) {
  res.write(`${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

const server = createServer(async (req, res) => {
  try {
    const path = new URL(req.url ?? '/', 'http://bare').pathname;
    if (req.method === 'POST' && path === '/api/workers/heartbeat') {
      await readJson(req);
      return sendJson(res, 200, HEARTBEAT_ANSWER);
    }
    if (req.method === 'GET' && path.endsWith('/logs/stream')) {
      res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache' });
      sendEvent(res, 'status', { status: 'PROCESSING', error_message: null });
      streams.add(res);
      req.on('close', () => streams.delete(res));
      return;
    }
    if (req.method === 'POST' && path.endsWith('/logs')) {
      const body = await readJson(req);
      const chunk = {
        id: nextChunkId++,
        log_chunk: body.log_chunk,
        stream_type: body.stream_type,
        created_at: new Date().toISOString(),
      };
      for (const stream of streams) sendEvent(stream, 'log', chunk, chunk.id);
      return sendJson(res, 201, { id: chunk.id, job_status: 'PROCESSING' });
    }
    if (req.method === 'POST' && path.endsWith('/plan-artifact')) {
      let size = 0;
      req.on('data', (part) => {
        size += part.length;
      });
      await new Promise((resolve, reject) => req.on('end', resolve).on('error', reject));
      return sendJson(res, 201, { job_id: path.split('/')[3], size, sha256: '' });
    }
    if (req.method === 'PUT' && path.endsWith('/status')) {
      const body = await readJson(req);
      for (const stream of streams) {
        sendEvent(stream, 'status', { status: body.status, error_message: null });
        sendEvent(stream, 'end', { status: body.status });
        stream.end();
      }
      streams.clear();
      return sendJson(res, 200, { status: body.status });
    }
    sendJson(res, 404, { code: 'not_found' });
  } catch {
    if (!res.headersSent) sendJson(res, 400, { code: 'bad_request' });
    else res.end();
  }
});

server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`bare node:http server listening on http://127.0.0.1:${server.address().port}\n`);
});
process.once('SIGTERM', () => {
  for (const stream of streams) stream.end();
  server.close(() => process.exit(0));
  server.closeIdleConnections();
});
