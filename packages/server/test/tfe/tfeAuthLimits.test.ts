/**
 * The failure limit of the Terraform Cloud API's bearer tokens (issue 26, issue 31) through a real
 * control plane on SQLite and Postgres: guesses from an address count, and past the limit the
 * address is refused (`429`), while a person's token that already verified from that address (the
 * stock CLI beside a guesser behind one NAT) keeps working; a token that never did waits out the
 * window like the guesses, and works from elsewhere.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RunningControlPlane, startControlPlane } from '../support/controlPlane.js';
import { describeEachDialect } from '../support/dialects.js';

const LIMIT = 3;

describeEachDialect('the Terraform Cloud API under the failure limit', (dialect) => {
  let plane: RunningControlPlane;
  let cliToken: string;
  let apiToken: string;

  beforeAll(async () => {
    plane = await startControlPlane(dialect, {
      env: {
        // Loopback (the tests) may forward: each X-Forwarded-For is a client of its own.
        TRELLIS_TRUST_PROXY: 'loopback',
        TRELLIS_TFE_AUTH_FAILURE_LIMIT: String(LIMIT),
        TRELLIS_TFE_AUTH_FAILURE_WINDOW_S: '600',
      },
    });
    cliToken = await plane.accessToken('ada@example.com');
    const ada = await plane.userClient('ada@example.com');
    apiToken = (await ada.createToken({ name: 'laptop' })).token;
  });
  afterAll(async () => {
    await plane?.close();
  });

  const account = (from: string, bearer: string | null) =>
    fetch(`${plane.url}/api/v2/account/details`, {
      headers: { 'x-forwarded-for': from, ...(bearer === null ? {} : { authorization: `Bearer ${bearer}` }) },
    });

  it('refuses guesses past the limit at their address; the tokens that verified there still pass', async () => {
    const nat = '198.51.100.20';
    expect((await account(nat, apiToken)).status).toBe(200);
    for (let i = 0; i < LIMIT; i++) {
      const guess = i % 2 === 0 ? `trt_guessed-${i}` : null;
      expect((await account(nat, guess)).status).toBe(401);
    }
    const refused = await account(nat, 'trt_guessed-again');
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ errors: [expect.objectContaining({ status: '429' })] });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // The person's token that verified from the address keeps working there; the guesses do not.
    expect((await account(nat, apiToken)).status).toBe(200);
    expect((await account(nat, 'trt_guessed-once-more')).status).toBe(429);
    // A token that never verified from the blocked address waits out the window there, and
    // works from another.
    expect((await account(nat, cliToken)).status).toBe(429);
    expect((await account('198.51.100.21', cliToken)).status).toBe(200);
  });
});
