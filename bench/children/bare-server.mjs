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
 * - the Terraform Cloud paths a stock CLI polls (cli-sessions): GET /api/v2/runs/{id}, /plans/{id},
 *   /organizations/{org}/workspaces/{name}, /workspaces/{id}/runs, /organizations/{org}/runs/queue,
 *   /organizations/{org}/capacity -> 200 JSON:API documents of the same shape; GET
 *   /_signed/logs/... -> the log's first bytes at offset 0, nothing after (a plan printing nothing new)
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
    if (req.method === 'GET' && (path.startsWith('/api/v2/') || path.startsWith('/_signed/logs/'))) {
      return answerTerraformCloud(req, res, path);
    }
    if (req.method === 'POST' && path.endsWith('/logs')) {
      const body = await readJson(req);
      if (Array.isArray(body.chunks)) {
        const last = body.chunks.at(-1)?.seq ?? 0;
        return sendJson(res, 200, { last_seq: last, stored: body.chunks.length, job_status: 'PROCESSING' });
      }
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

const JSON_API_TYPE = 'application/vnd.api+json';
const LOG_START = `\u0002${'terraform_data.a: Refreshing state...\n'.repeat(8)}`;

/** A JSON:API document like the control plane's for each path the stock CLI polls. */
function answerTerraformCloud(req, res, path) {
  const parts = path.split('/');
  const id = parts.at(-1);
  const resource = (type, rid, attributes, relationships = {}) => ({ id: rid, type, attributes, relationships });
  const run = (rid) =>
    resource(
      'runs',
      rid,
      { status: 'pending', 'created-at': new Date(0).toISOString(), 'has-changes': false, 'is-destroy': false },
      {
        plan: { data: { id: `plan-${rid.slice(4)}`, type: 'plans' } },
        workspace: { data: { id: 'ws-x', type: 'workspaces' } },
      },
    );
  const page = { 'current-page': 1, 'next-page': null, 'prev-page': null, 'total-pages': 1, 'total-count': 1 };
  let document;
  if (path.startsWith('/_signed/logs/')) {
    const offset = Number(new URL(req.url, 'http://bare').searchParams.get('offset') ?? 0);
    const text = offset === 0 ? LOG_START : '';
    res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
    return res.end(text);
  }
  if (parts[3] === 'runs') document = { data: run(id) };
  else if (parts[3] === 'plans') {
    document = {
      data: resource('plans', id, {
        status: 'running',
        'log-read-url': `/_signed/logs/plan/${id.slice(5)}/token/signature`,
      }),
    };
  } else if (path.endsWith('/runs/queue')) {
    document = {
      data: [{ ...run('run-queued'), attributes: { status: 'plan_queued', 'position-in-queue': 1 } }],
      meta: { pagination: page },
    };
  } else if (path.endsWith('/capacity')) {
    document = { data: resource('organization-capacity', parts[4], { pending: 20, running: 30 }) };
  } else if (parts[3] === 'workspaces') document = { data: [run('run-x')], meta: { pagination: page } };
  else document = { data: resource('workspaces', 'ws-x', { name: id, locked: false, 'execution-mode': 'remote' }) };
  const text = JSON.stringify(document);
  res.writeHead(200, { 'Content-Type': JSON_API_TYPE, 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`bare node:http server listening on http://127.0.0.1:${server.address().port}\n`);
});
process.once('SIGTERM', () => {
  for (const stream of streams) stream.end();
  server.close(() => process.exit(0));
  server.closeIdleConnections();
});
