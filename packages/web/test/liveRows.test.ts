/**
 * The live lists' streams (`GET /live/jobs`, `/live/queue`, issue 29) over HTTP against a real
 * control plane: a changed job (or the queue) is read once per person whatever number of tabs they
 * have open, every stream gets its row (or list), the keepalive comment is a task of the
 * scheduler, a stream closes with its client, and one person's open streams are capped.
 */
import type { TrellisClient } from '@trellis/client';
import type { VineView } from '@trellis/core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { vineyardWithVine, WebServer } from './support/webServer.js';

/** An open stream of the list, read as it comes. */
class StreamReader {
  text = '';
  private readonly decoder = new TextDecoder();

  private constructor(
    readonly response: Response,
    private readonly controller: AbortController,
    private readonly reader: ReadableStreamDefaultReader<Uint8Array> | null,
  ) {}

  static async open(url: string, cookie: string): Promise<StreamReader> {
    const controller = new AbortController();
    const response = await fetch(url, { headers: { cookie }, signal: controller.signal });
    return new StreamReader(response, controller, response.ok ? (response.body?.getReader() ?? null) : null);
  }

  /** Reads until `wanted` is in the stream. */
  async until(wanted: string): Promise<void> {
    while (!this.text.includes(wanted)) {
      const { value, done } = await (this.reader as ReadableStreamDefaultReader<Uint8Array>).read();
      if (done) throw new Error(`the stream ended before ${JSON.stringify(wanted)}: ${this.text}`);
      this.text += this.decoder.decode(value, { stream: true });
    }
  }

  close(): void {
    this.controller.abort();
  }
}

describe('live job list streams', () => {
  let server: WebServer;
  let cookie: string;
  let user: TrellisClient;
  let vine: VineView;

  const stats = () =>
    server.controlPlane?.liveLists.stats() ?? { open: -1, reads: -1, rowsSent: -1, refused: -1, overflowed: -1 };

  beforeAll(async () => {
    server = await new WebServer().start();
    cookie = await server.sessionCookie();
    user = await server.userClient();
    vine = (await vineyardWithVine(user, 'streams')).vine;
  });
  afterAll(async () => {
    await server?.close();
  });

  it('reads a changed job once for a person with two tabs open, and sends its row to both', async () => {
    const tabs = [
      await StreamReader.open(`${server.url}/live/jobs?view=jobs`, cookie),
      await StreamReader.open(`${server.url}/live/jobs?view=vine&vine_id=${vine.id}`, cookie),
    ];
    for (const tab of tabs) {
      expect(tab.response.status).toBe(200);
      expect(tab.response.headers.get('cache-control')).toBe('no-cache, no-transform');
      await tab.until('event: rows\n');
    }
    const before = stats();
    expect(before.open).toBe(2);

    const job = await user.createJob({ job_type: 'PLAN', configuration_id: vine.id });
    for (const tab of tabs) await tab.until(`data-job-row="${job.id}"`);
    expect(stats().reads - before.reads).toBe(1);
    // Each list's own row: the jobs list names the vine, the vine's list shows the commit column.
    expect(tabs[0]?.text).toContain('<td>streams</td>');
    expect(tabs[1]?.text).not.toContain('<td>streams</td>');

    await server.controlPlane?.scheduler.runNow('live-lists-keepalive');
    for (const tab of tabs) await tab.until(': keepalive\n\n');

    for (const tab of tabs) tab.close();
    await vi.waitFor(() => expect(stats().open).toBe(0));
  });

  it('reads the queue once per change for a person with two tabs of it open, and sends it to both', async () => {
    const tabs = [
      await StreamReader.open(`${server.url}/live/queue`, cookie),
      await StreamReader.open(`${server.url}/live/queue`, cookie),
    ];
    for (const tab of tabs) await tab.until('event: rows\n');
    const before = stats();
    const job = await user.createJob({ job_type: 'PLAN', configuration_id: vine.id });
    for (const tab of tabs) await tab.until(`data-queue-job="${job.id}"`);
    expect(stats().reads - before.reads).toBe(1);
    for (const tab of tabs) tab.close();
    await vi.waitFor(() => expect(stats().open).toBe(0));
  });

  it("caps one person's open streams: one more is answered 429 with Retry-After", async () => {
    const { perUser } = server.controlPlane?.liveLists.limits ?? { perUser: 0 };
    const open: StreamReader[] = [];
    for (let i = 0; i < perUser; i++) open.push(await StreamReader.open(`${server.url}/live/jobs?view=jobs`, cookie));
    expect(open.map((stream) => stream.response.status)).toEqual(open.map(() => 200));
    const refused = await StreamReader.open(`${server.url}/live/jobs?view=jobs`, cookie);
    expect(refused.response.status).toBe(429);
    expect(refused.response.headers.get('retry-after')).toBe('5');
    expect(await refused.response.text()).toContain('live lists open');
    for (const stream of open) stream.close();
    await vi.waitFor(() => expect(stats().open).toBe(0));
    const again = await StreamReader.open(`${server.url}/live/jobs?view=jobs`, cookie);
    expect(again.response.status).toBe(200);
    again.close();
  });
});
