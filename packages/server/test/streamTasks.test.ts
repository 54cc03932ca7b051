/**
 * Issue 24, one scheduler: the live-log streams' keepalive and their re-read of followed jobs are
 * two local tasks of the control plane's scheduler, one for all streams, not a timer per stream.
 */
import type { TrellisEvent } from '@trellis/core';
import { MemoryEventBus } from '@trellis/testkit';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type RunningControlPlane, startControlPlane, vineyardWithConfiguration } from './support/controlPlane.js';

/** A bus that loses every `log_appended` event: only the recheck brings chunks to a stream. */
class LosingBus extends MemoryEventBus {
  override async publish(event: TrellisEvent): Promise<void> {
    if (event.type !== 'log_appended') await super.publish(event);
  }
}

describe('the live-log streams’ background tasks', () => {
  let server: RunningControlPlane;

  beforeAll(async () => {
    server = await startControlPlane('sqlite', { register: { eventBus: new LosingBus() } });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('are tasks of the scheduler, each run for every open stream', async () => {
    const ids = Object.keys(server.controlPlane.scheduler.stats());
    expect(ids).toEqual(expect.arrayContaining(['live-log-keepalive', 'live-log-recheck']));

    const user = await server.userClient('keepalive@example.com');
    const { configuration } = await vineyardWithConfiguration(user, 'keepalive');
    const job = await user.createJob({ job_type: 'PLAN', configuration_id: configuration.id });
    const agent = await server.agentClient(user, 'keepalive-agent');
    expect((await agent.claimJob())?.job.id).toBe(job.id);

    const response = await fetch(`${server.url}/api/jobs/${job.id}/logs/stream`, {
      headers: { Authorization: `Bearer ${await server.accessToken('keepalive@example.com')}` },
    });
    expect(response.status).toBe(200);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = '';
    const readUntil = async (wanted: string) => {
      while (!text.includes(wanted)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended before ${JSON.stringify(wanted)}: ${text}`);
        text += decoder.decode(value, { stream: true });
      }
    };
    await vi.waitFor(() => expect(server.controlPlane.logStreams.stats().live).toBe(1));

    await server.controlPlane.scheduler.runNow('live-log-keepalive');
    await readUntil(': keepalive\n\n');

    // The chunk's event is lost: the recheck reads it for the stream.
    await agent.appendLog(job.id, 'found by the recheck\n', 'STDOUT');
    await server.controlPlane.scheduler.runNow('live-log-recheck');
    await readUntil('found by the recheck');
    await reader.cancel();
  });
});
