/**
 * `trellis providers publish` reads a release directory before it talks to any server: what is
 * missing is named, and the command exits non-zero (the end-to-end publish is in
 * packages/server/test/registry/providers.test.ts, with the real tofu).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runTrellis, TempHome } from './harness.js';

const home = new TempHome();
const dist = mkdtempSync(join(tmpdir(), 'trellis-dist-'));
afterAll(() => {
  home.remove();
  rmSync(dist, { recursive: true, force: true });
});

const publish = (dir: string) =>
  runTrellis(
    [
      'providers',
      'publish',
      dir,
      '--namespace',
      'acme',
      '--type',
      'null',
      '--version',
      '1.0.0',
      '--server',
      'http://127.0.0.1:9',
    ],
    { env: home.env({ TRELLIS_TOKEN: 'trt_unused' }) },
  );

describe('trellis providers publish', () => {
  it('names the file a release directory lacks, and never calls the server', async () => {
    const missingDir = await publish(join(dist, 'nope'));
    expect(missingDir.code).not.toBe(0);
    expect(missingDir.stderr).toContain(`cannot read the directory "${join(dist, 'nope')}"`);

    const noSums = await publish(dist);
    expect(noSums.code).not.toBe(0);
    expect(noSums.stderr).toContain('has no terraform-provider-null_1.0.0_SHA256SUMS');

    writeFileSync(join(dist, 'terraform-provider-null_1.0.0_SHA256SUMS'), `${'a'.repeat(64)}  x.zip\n`);
    writeFileSync(join(dist, 'terraform-provider-null_1.0.0_SHA256SUMS.sig'), 'sig');
    const noZip = await publish(dist);
    expect(noZip.code).not.toBe(0);
    expect(noZip.stderr).toContain('has no terraform-provider-null_1.0.0_<os>_<arch>.zip');
  });

  it('says which flags are required', async () => {
    const result = await runTrellis(['providers', 'versions', '--namespace', 'acme'], { env: home.env() });
    expect(result.code).not.toBe(0);
    expect(`${result.stdout}${result.stderr}`).toContain('--type');
  });
});
