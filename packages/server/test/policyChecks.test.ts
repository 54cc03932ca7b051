/**
 * Checking policy modules with the real OPA when they are saved (issue 23), over HTTP on SQLite and
 * Postgres with people signed in through the GitHub sign-in against a stand-in on loopback: the
 * caller's role is checked before any engine runs; a large valid module compiles (OPA's output
 * is read as it comes, not into a 1 MiB buffer); a module over 64 KiB is `413 policy_too_large`;
 * checks are bounded, and one past the bound is `429 policy_checks_busy` at once.
 *
 * `TRELLIS_OPA_BIN` is a wrapper around the real `opa` that writes each run to a file and, while a
 * hold file exists, waits before running it: so the test sees what ran and controls when.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TrellisApiError } from '@trellis/client';
import { joinOrg, requirePeer } from '@trellis/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from './support/dialects.js';
import { type PeopleServer, type Person, startPeopleServer } from './support/people.js';

const OPA = requirePeer('opa', 'policy checks with real OPA');

const HEAD =
  'package trellis\n\ndeny contains msg if {\n  input.resource_changes[_].change.actions[_] == "delete"\n  msg := "no deletes"\n}\n';

/** A valid module of about `bytes` bytes whose syntax tree OPA prints at over 1 MiB (37 KiB: 1.6 MB). */
function largeModule(bytes: number): string {
  let module = HEAD;
  for (let i = 0; module.length < bytes; i++)
    module += `\nlimits_${i} := [1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0]`;
  return `${module}\n`;
}

async function outcome(call: () => Promise<unknown>): Promise<string> {
  try {
    await call();
    return 'ok';
  } catch (error) {
    if (error instanceof TrellisApiError) return `${error.status} ${error.code}`;
    throw error;
  }
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (condition()) return;
    await new Promise((done) => setTimeout(done, 20));
  }
  throw new Error(`never happened: ${what}`);
}

describe.skipIf(!OPA)('policy checks with the real OPA', () => {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-opa-wrapper-'));
  const runs = join(dir, 'runs.log');
  const hold = join(dir, 'hold');
  const started = join(dir, 'started');
  const wrapper = join(dir, 'opa');
  writeFileSync(runs, '');
  writeFileSync(
    wrapper,
    `#!/bin/sh\necho "$1" >> '${runs}'\nif [ -e '${hold}' ]; then\n  touch '${started}'\n  while [ -e '${hold}' ]; do sleep 0.02; done\nfi\nexec '${OPA}' "$@"\n`,
  );
  chmodSync(wrapper, 0o755);
  const runCount = () => readFileSync(runs, 'utf8').split('\n').filter(Boolean).length;
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  describeEachDialect('saving policies', (dialect) => {
    let people: PeopleServer;
    let ada: Person;
    let orgId: string;

    beforeAll(async () => {
      people = await startPeopleServer(dialect, {
        env: { TRELLIS_OPA_BIN: wrapper, TRELLIS_POLICY_CHECKS_CONCURRENCY: '1', TRELLIS_POLICY_CHECKS_QUEUE: '0' },
      });
      ada = await people.signIn('ada');
      orgId = (await ada.client.createOrg(`policies-${dialect}`)).id;
    }, 60_000);
    afterAll(() => people?.close());

    it('checks the role before running the engine: a viewer or a stranger costs no OPA run', async () => {
      const vera = await people.signIn('vera');
      await joinOrg(ada.client, vera.client, orgId, vera.email, 'viewer');
      const stranger = await people.signIn('sam');
      const before = runCount();
      const attempt = (person: Person) =>
        outcome(() =>
          person.client.createPolicy({
            name: 'p',
            enforcement: 'mandatory',
            module: largeModule(30_000),
            org_id: orgId,
          }),
        );
      expect(await attempt(vera)).toBe('403 insufficient_role');
      expect(await attempt(stranger)).toBe('404 org_not_found');
      const policy = await ada.client.createPolicy({
        name: 'small',
        enforcement: 'advisory',
        module: HEAD,
        org_id: orgId,
      });
      const afterCreate = runCount();
      expect(afterCreate).toBe(before + 2); // check and parse, for ada's only
      expect(await outcome(() => vera.client.updatePolicy(policy.id, { module: `${HEAD}\n` }))).toBe(
        '403 insufficient_role',
      );
      expect(runCount()).toBe(afterCreate);
    });

    it('compiles a 37 KiB module whose syntax tree is over 1 MiB; refuses one over 64 KiB with 413', async () => {
      const module = largeModule(37 * 1024);
      const created = await ada.client.createPolicy({ name: 'large', enforcement: 'mandatory', module, org_id: orgId });
      expect(created).toMatchObject({ name: 'large', version: 1, module });
      expect(await outcome(() => ada.client.updatePolicy(created.id, { module: largeModule(60 * 1024) }))).toBe('ok');
      const tooLarge = await fetch(`${people.web}/api/policies`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ada.accessToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          name: 'huge',
          enforcement: 'mandatory',
          module: largeModule(64 * 1024 + 100),
          org_id: orgId,
        }),
      });
      expect(tooLarge.status).toBe(413);
      expect(await tooLarge.json()).toMatchObject({ code: 'policy_too_large', status: 413 });
      // A broken one is still the engine's message.
      expect(
        await outcome(() =>
          ada.client.createPolicy({
            name: 'broken',
            enforcement: 'mandatory',
            module: 'package x\n\ndeny contains msg if {',
            org_id: orgId,
          }),
        ),
      ).toBe('422 policy_invalid');
    });

    it('checks one module at a time here; another one meanwhile is 429 policy_checks_busy at once', async () => {
      writeFileSync(hold, '');
      rmSync(started, { force: true });
      const first = ada.client.createPolicy({ name: 'first', enforcement: 'advisory', module: HEAD, org_id: orgId });
      try {
        await until(() => existsSync(started), 'the first check is running');
        const busy = await fetch(`${people.web}/api/policies`, {
          method: 'POST',
          headers: { authorization: `Bearer ${ada.accessToken}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'second', enforcement: 'advisory', module: HEAD, org_id: orgId }),
        });
        expect(busy.status).toBe(429);
        expect(busy.headers.get('retry-after')).toBe('1');
        expect(await busy.json()).toMatchObject({ code: 'policy_checks_busy' });
      } finally {
        rmSync(hold, { force: true });
      }
      expect(await first).toMatchObject({ name: 'first' });
      expect(
        await ada.client.createPolicy({ name: 'second', enforcement: 'advisory', module: HEAD, org_id: orgId }),
      ).toMatchObject({ name: 'second' });
    });
  });
});
