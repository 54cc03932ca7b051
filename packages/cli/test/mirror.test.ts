/** `trellis mirror push` and `list` through the real binary and server (issue 28). */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ProviderMirrorDir, writeProviderMirrorDir } from '@trellis/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, runTrellis, TempHome, TestServer } from './harness.js';

let server: TestServer;
let home: TempHome;
let mirror: ProviderMirrorDir;

beforeAll(async () => {
  server = await new TestServer().start();
  home = new TempHome();
  await login(server, home);
  expect((await runTrellis(['orgs', 'create', 'acme'], { env: home.env() })).code).toBe(0);
  // A stand-in for a provider binary: the server hashes whatever files the zip holds.
  const binary = join(home.dir, 'terraform-provider-null');
  writeFileSync(binary, '#!/bin/sh\necho not really a provider\n');
  mirror = writeProviderMirrorDir(binary);
});
afterAll(async () => {
  await server?.destroy();
  home?.remove();
  if (mirror) rmSync(mirror.dir, { recursive: true, force: true });
});

describe('trellis mirror', () => {
  it('pushes each archive of a `tofu providers mirror` directory once, and lists them', async () => {
    const pushed = await runTrellis(['mirror', 'push', mirror.dir, '--namespace', 'acme'], { env: home.env() });
    expect(pushed.code, pushed.stderr).toBe(0);
    expect(pushed.stdout).toContain(`pushed registry.opentofu.org/hashicorp/null 3.2.4 ${mirror.platform}`);
    const again = await runTrellis(['mirror', 'push', mirror.dir, '--namespace', 'acme', '--json'], {
      env: home.env(),
    });
    expect(again.code, again.stderr).toBe(0);
    const [result] = JSON.parse(again.stdout);
    expect(result).toMatchObject({ created: false, archive: { provider: 'registry.opentofu.org/hashicorp/null' } });
    expect(result.archive.hashes).toEqual([expect.stringMatching(/^h1:/), mirror.zh]);

    const listed = await runTrellis(['mirror', 'list', '--namespace', 'acme', '--json'], { env: home.env() });
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout).map((a: { id: string }) => a.id)).toEqual([result.archive.id]);
    const table = await runTrellis(['mirror', 'list', '--namespace', 'acme'], { env: home.env() });
    expect(table.stdout).toMatch(/registry\.opentofu\.org\/hashicorp\/null\s+3\.2\.4\s+/);
  });

  it('names what was typed when the directory or the namespace is wrong', async () => {
    const missing = await runTrellis(['mirror', 'push', join(home.dir, 'nope'), '--namespace', 'acme'], {
      env: home.env(),
    });
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain(`${join(home.dir, 'nope')} is not a directory`);
    const stray = join(home.dir, 'stray');
    mkdirSync(join(stray, 'registry.opentofu.org'), { recursive: true });
    writeFileSync(join(stray, 'registry.opentofu.org', 'terraform-provider-x_1.0.0_linux_amd64.zip'), 'zip');
    const misplaced = await runTrellis(['mirror', 'push', stray, '--namespace', 'acme'], { env: home.env() });
    expect(misplaced.code).not.toBe(0);
    expect(misplaced.stderr).toContain('is not where `tofu providers mirror` puts a provider');
    const other = await runTrellis(['mirror', 'list', '--namespace', 'not-mine'], { env: home.env() });
    expect(other.code).not.toBe(0);
    expect(other.stderr).toContain('namespace');
  });
});
