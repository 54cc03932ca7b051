/**
 * The failure limit of agent credentials (issue 23) over HTTP on SQLite and Postgres, with the agent
 * registered by a person signed in through the GitHub sign-in against a stand-in on loopback:
 * failed authentications at the state backend count like the agent routes'; and guessers sharing
 * the real agent's address (one NAT) do not lock it out, while their guesses stay refused.
 */
import { TrellisClient } from '@trellis/client';
import { FakeClock, INLINE_MAIN_TF } from '@trellis/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from './support/dialects.js';
import { type PeopleServer, startPeopleServer } from './support/people.js';

const LIMIT = 5;

describeEachDialect('agent credentials under the failure limit', (dialect) => {
  let people: PeopleServer;
  const clock = new FakeClock(new Date());

  beforeAll(async () => {
    people = await startPeopleServer(dialect, {
      clock,
      env: {
        // Loopback (the tests) may forward: each X-Forwarded-For is a client of its own.
        TRELLIS_TRUST_PROXY: 'loopback',
        TRELLIS_WORKER_AUTH_FAILURE_LIMIT: String(LIMIT),
        TRELLIS_WORKER_AUTH_FAILURE_WINDOW_S: '600',
        TRELLIS_WORKER_AUTH_CACHE_S: '5',
      },
    });
  }, 60_000);
  afterAll(() => people?.close());

  const heartbeat = (from: string, workerId: string, token: string) =>
    fetch(`${people.web}/api/workers/heartbeat`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-worker-id': workerId,
        'x-worker-token': token,
        'x-forwarded-for': from,
      },
      body: JSON.stringify({ version: '1.0.0' }),
    });
  const readState = (from: string, vineId: string, user: string, password: string) =>
    fetch(`${people.web}/api/state/${vineId}`, {
      headers: {
        authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
        'x-forwarded-for': from,
      },
    });

  async function agentWithVine(name: string) {
    const person = await people.signIn(`${name}-${dialect}`);
    const vineyard = await person.client.createVineyard(`yard-${name}`);
    const vine = await person.client.createConfiguration({
      name: `vine-${name}`,
      vineyard_id: vineyard.id,
      source: { type: 'inline', files: { 'main.tf': INLINE_MAIN_TF } },
    });
    const agent = await person.client.registerWorker({ name: `agent-${name}` });
    // A PLAN the agent runs: its state token is what the engine's http backend sends.
    await person.client.createJob({ job_type: 'PLAN', configuration_id: vine.id });
    const claimed = await new TrellisClient({
      baseUrl: people.web,
      auth: { kind: 'worker', workerId: agent.worker_id, workerToken: agent.worker_token },
    }).claimJob();
    const stateToken = claimed?.state_token as string;
    expect(stateToken).toEqual(expect.any(String));
    return { vine, agent, stateToken };
  }

  it('counts failed state backend authentications toward the limit, then answers 429', async () => {
    const { vine, agent, stateToken } = await agentWithVine('state');
    const guesser = '203.0.113.50';
    for (let i = 0; i < LIMIT; i++) {
      expect((await readState(guesser, vine.id, agent.worker_id, `wrong-token-${i}`)).status).toBe(401);
    }
    const refused = await readState(guesser, vine.id, agent.worker_id, 'wrong-again');
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ code: 'rate_limited' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // The same count as the agent routes': the address is blocked there too.
    expect((await heartbeat(guesser, crypto.randomUUID(), 'guessed')).status).toBe(429);
    // Elsewhere, the agent's own credentials open the state.
    expect((await readState('203.0.113.51', vine.id, agent.worker_id, stateToken)).status).toBe(204);
  });

  it('lets the real agent in from an address its neighbours are blocked at; their guesses stay refused', async () => {
    const { vine, agent, stateToken } = await agentWithVine('nat');
    const nat = '198.51.100.77';
    expect((await heartbeat(nat, agent.worker_id, agent.worker_token)).status).toBe(200);
    // Neighbours behind the same NAT guess: random workers, and the real one's token.
    for (let i = 0; i < LIMIT; i++) {
      const guess = i % 2 === 0 ? crypto.randomUUID() : agent.worker_id;
      expect((await heartbeat(nat, guess, `guessed-${i}`)).status).toBe(401);
    }
    expect((await heartbeat(nat, crypto.randomUUID(), 'guessed')).status).toBe(429);
    // Past the credential cache (the agent's next request reads the database), within the window.
    clock.advance({ seconds: 30 });
    expect((await heartbeat(nat, agent.worker_id, agent.worker_token)).status).toBe(200);
    expect((await readState(nat, vine.id, agent.worker_id, stateToken)).status).toBe(204);
    // A wrong token for the real agent is still refused, and so is any other worker.
    expect((await heartbeat(nat, agent.worker_id, 'still-guessing')).status).toBe(429);
    expect((await heartbeat(nat, crypto.randomUUID(), 'guessed')).status).toBe(429);
    // A worker that never verified from the address waits out the window.
    const { agent: newcomer } = await agentWithVine('newcomer');
    clock.advance({ seconds: 10 });
    expect((await heartbeat(nat, newcomer.worker_id, newcomer.worker_token)).status).toBe(429);
    clock.advance({ seconds: 601 });
    expect((await heartbeat(nat, newcomer.worker_id, newcomer.worker_token)).status).toBe(200);
  });
});
