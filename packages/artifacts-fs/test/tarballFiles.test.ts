/**
 * `TarGzChecker.readFiles` (issue 28): the registry page reads a module's root `*.tf` files and
 * README out of its stored tarball, below the directory a provider's archive wraps it in.
 */
import { describeModule, isDescribedFile, MAX_DESCRIBED_FILE_BYTES } from '@trellis/core';
import { chunksOf, tarGz } from '@trellis/testkit';
import { describe, expect, it } from 'vitest';
import { TarGzChecker } from '../src/TarGzChecker.js';

const reader = new TarGzChecker();
const select = { select: isDescribedFile, maxFileBytes: MAX_DESCRIBED_FILE_BYTES };

describe('TarGzChecker.readFiles', () => {
  it("reads the picked files of a provider's archive, below its top directory", async () => {
    const bytes = tarGz([
      { path: 'acme-vpc-8457785/', type: 'directory' },
      { path: 'acme-vpc-8457785/main.tf', content: 'variable "name" {\n  type = string\n}\n' },
      { path: 'acme-vpc-8457785/README.md', content: '# VPC\n' },
      { path: 'acme-vpc-8457785/modules/sub/main.tf', content: 'variable "inner" {}\n' },
      { path: 'acme-vpc-8457785/link.tf', type: 'symlink', linkpath: 'main.tf' },
    ]);
    const files = await reader.readFiles(chunksOf(bytes, 100), { stripComponents: 1, ...select });
    expect(files.sort((a, b) => (a.path < b.path ? -1 : 1))).toEqual([
      { path: 'README.md', text: '# VPC\n' },
      { path: 'main.tf', text: 'variable "name" {\n  type = string\n}\n' },
    ]);
    expect(describeModule(files).inputs.map((input) => input.name)).toEqual(['name']);
  });

  it('reads an upload at its root, and leaves out a file over the limit', async () => {
    const bytes = tarGz([
      { path: 'outputs.tf', content: 'output "id" { value = 1 }\n' },
      { path: 'huge.tf', content: 'x'.repeat(2048) },
    ]);
    const files = await reader.readFiles(chunksOf(bytes), {
      stripComponents: 0,
      select: isDescribedFile,
      maxFileBytes: 1024,
    });
    expect(files).toEqual([{ path: 'outputs.tf', text: 'output "id" { value = 1 }\n' }]);
  });

  it('refuses bytes that are not a tar.gz', async () => {
    await expect(
      reader.readFiles(chunksOf(Buffer.from('not a tarball at all, just text'.repeat(40))), {
        stripComponents: 0,
        ...select,
      }),
    ).rejects.toMatchObject({ code: 'configuration_invalid' });
  });
});

describe('TarGzChecker.unwrap', () => {
  const limits = { stripComponents: 1, maxUnpackedBytes: 1024 * 1024, maxEntries: 100, maxBytes: 1024 * 1024 };

  it("packs a provider's archive again with its tree at the root", async () => {
    const bytes = tarGz([
      { path: 'acme-vpc-8457785/', type: 'directory' },
      { path: 'acme-vpc-8457785/main.tf', content: 'output "id" { value = 1 }\n' },
      { path: 'acme-vpc-8457785/modules/sub/main.tf', content: '# sub\n' },
    ]);
    const unwrapped = await reader.unwrap(chunksOf(bytes), limits);
    const chunks: Uint8Array[] = [];
    for await (const chunk of unwrapped.body) chunks.push(chunk);
    await unwrapped.dispose();
    const packed = Buffer.concat(chunks);
    const files = await reader.readFiles(chunksOf(packed), {
      stripComponents: 0,
      select: () => true,
      maxFileBytes: 1024,
    });
    expect(files.map((file) => file.path).sort()).toEqual(['main.tf', 'modules/sub/main.tf']);
    await expect(reader.check(chunksOf(packed), { ...limits, stripComponents: 0 })).resolves.toMatchObject({
      entries: 4,
    });
  });

  it('refuses an archive with a path out of its root, or over the size limit', async () => {
    const escaping = tarGz([{ path: 'top/../../etc/passwd', content: 'x' }]);
    await expect(reader.unwrap(chunksOf(escaping), limits)).rejects.toMatchObject({ code: 'configuration_invalid' });
    const big = tarGz([{ path: 'top/main.tf', content: 'x'.repeat(4096) }]);
    await expect(reader.unwrap(chunksOf(big), { ...limits, maxBytes: 64 })).rejects.toMatchObject({
      code: 'configuration_too_large',
    });
  });
});
