/**
 * Issue 30: an upload on a slow link takes as long as it takes. A large body (over 1 MiB) is cut
 * only when it stalls (`TRELLIS_HTTP_BODY_IDLE_TIMEOUT_S`), never for its total time, as Node's
 * own `requestTimeout` would (5 minutes: a 20 MB plan at 20 KB/s needs 17). Raw requests trickle
 * a plan upload through a real control plane on loopback.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RunningControlPlane, startControlPlane, vineyardWithConfiguration } from './support/controlPlane.js';
import { describeEachDialect } from './support/dialects.js';

const IDLE_S = 2;
const SIZE = 2 * 1024 * 1024;
const PIECES = 8;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describeEachDialect('a large request body on a slow link', (dialect) => {
  let server: RunningControlPlane;

  beforeAll(async () => {
    server = await startControlPlane(dialect, { env: { TRELLIS_HTTP_BODY_IDLE_TIMEOUT_S: String(IDLE_S) } });
  });
  afterAll(async () => {
    await server?.close();
  });

  /** A claimed PLAN and the raw request that uploads its plan, `pause(i)` ms before piece i. */
  async function trickledUpload(name: string, pause: (piece: number) => number) {
    const user = await server.userClient(`${name}@example.com`);
    const { configuration } = await vineyardWithConfiguration(user, name);
    const plan = await user.createJob({ job_type: 'PLAN', configuration_id: configuration.id });
    const agent = await server.agentClient(user, name);
    await agent.claimJob();
    const url = new URL(`/api/jobs/${plan.id}/plan-artifact`, server.url);
    const answer = new Promise<{ status: number; body: string } | { cut: string }>((resolve) => {
      const req = httpRequest(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/octet-stream',
          'content-length': String(SIZE),
          'x-worker-id': agent.workerId,
          'x-worker-token': agent.workerToken,
        },
      });
      req.on('response', (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => {
          body += chunk.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', (error) => resolve({ cut: (error as NodeJS.ErrnoException).code ?? String(error) }));
      void (async () => {
        const piece = Buffer.alloc(SIZE / PIECES, 7);
        for (let i = 0; i < PIECES; i += 1) {
          await sleep(pause(i));
          if (req.destroyed) return;
          req.write(piece);
        }
        req.end();
      })();
    });
    return { agent, plan, answer: await answer };
  }

  it('arrives whole however long it takes, as long as it keeps coming', async () => {
    // Eight pieces a second apart: the upload lasts four times the idle limit, never idle that long.
    const started = Date.now();
    const { answer } = await trickledUpload('steady', (i) => (i === 0 ? 0 : 1000));
    expect(answer).toMatchObject({ status: 201 });
    expect(JSON.parse((answer as { body: string }).body)).toMatchObject({ size: SIZE });
    expect(Date.now() - started).toBeGreaterThan(IDLE_S * 1000);
  });

  it('is cut when it stalls longer than the idle limit, and nothing of it is stored', async () => {
    const { agent, plan, answer } = await trickledUpload('stalled', (i) => (i === 3 ? IDLE_S * 1000 * 3 : 0));
    expect(answer).toHaveProperty('cut');
    // The agent can upload it again, whole (nothing half-written was kept).
    const content = Buffer.alloc(1024, 1);
    expect(await agent.uploadPlanArtifact(plan.id, content, content.length)).toMatchObject({ size: content.length });
  });
});
