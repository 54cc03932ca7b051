import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_REPORTED_MODULES, parseExecutionMetadata } from '@trellis/core';
import { afterAll, describe, expect, it } from 'vitest';
import { modulesManifestPath, readInstalledModules } from '../../src/job/installedModules.js';

const root = mkdtempSync(join(tmpdir(), 'trellis-modules-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let n = 0;
function manifest(text: string | null): string {
  const dir = join(root, `w${n++}`);
  mkdirSync(join(dir, '.terraform', 'modules'), { recursive: true });
  if (text !== null) writeFileSync(join(dir, '.terraform', 'modules', 'modules.json'), text);
  return modulesManifestPath(dir, {});
}

describe('the registry modules a job installed', () => {
  it('reports the modules.json entries that have a version, each once, and no local or root module', () => {
    const file = manifest(
      JSON.stringify({
        Modules: [
          { Key: '', Source: '', Dir: '.' },
          { Key: 'vpc', Source: 'trellis.example.com/acme/vpc/aws', Version: '1.2.0', Dir: '.terraform/modules/vpc' },
          { Key: 'vpc2', Source: 'trellis.example.com/acme/vpc/aws', Version: '1.2.0', Dir: '.terraform/modules/vpc2' },
          { Key: 'old', Source: 'trellis.example.com/acme/vpc/aws', Version: '1.1.0', Dir: '.terraform/modules/old' },
          { Key: 'local', Source: './modules/local', Dir: 'modules/local' },
          { Key: 'git', Source: 'git::https://example.com/x.git', Dir: '.terraform/modules/git' },
        ],
      }),
    );
    const read = readInstalledModules(file);
    expect(read).toEqual({
      modules: [
        { source: 'trellis.example.com/acme/vpc/aws', version: '1.2.0' },
        { source: 'trellis.example.com/acme/vpc/aws', version: '1.1.0' },
      ],
      note: null,
    });
    // What it reports is what the control plane accepts.
    expect(parseExecutionMetadata({ modules: read.modules }).modules).toEqual(read.modules);
  });

  it('reports nothing, without failing, when the file is missing or malformed', () => {
    expect(readInstalledModules(manifest(null))).toEqual({ modules: [], note: null });
    expect(readInstalledModules(manifest('{"Modules": [')).modules).toEqual([]);
    expect(readInstalledModules(manifest('{"Modules": [')).note).toMatch(/not JSON/);
    expect(readInstalledModules(manifest('{"Modules": {"vpc": 1}}')).note).toMatch(/no Modules list/);
    expect(
      readInstalledModules(manifest(JSON.stringify({ Modules: [null, 7, { Source: 3, Version: '1.0.0' }] }))),
    ).toEqual({ modules: [], note: null });
  });

  it('stays within the limits the control plane checks, saying how many it left out', () => {
    const entries = Array.from({ length: MAX_REPORTED_MODULES + 5 }, (_, i) => ({
      Key: `m${i}`,
      Source: `trellis.example.com/acme/m${i}/aws`,
      Version: '1.0.0',
    }));
    entries.push({ Key: 'long', Source: `trellis.example.com/acme/${'x'.repeat(600)}/aws`, Version: '1.0.0' });
    const read = readInstalledModules(manifest(JSON.stringify({ Modules: entries })));
    expect(read.modules).toHaveLength(MAX_REPORTED_MODULES);
    expect(read.note).toMatch(/6 more registry module/);
    expect(() => parseExecutionMetadata({ modules: read.modules })).not.toThrow();
  });

  it('follows TF_DATA_DIR', () => {
    expect(modulesManifestPath('/work/src', { TF_DATA_DIR: '/data/tf' })).toBe('/data/tf/modules/modules.json');
    expect(modulesManifestPath('/work/src', {})).toBe('/work/src/.terraform/modules/modules.json');
  });
});

describe('the modules the control plane accepts in a report', () => {
  it('refuses a malformed or overlong list, naming the entry', () => {
    expect(() => parseExecutionMetadata({ modules: [{ source: 'a/b/c/d' }] })).toThrow(/execution_metadata\.modules/);
    expect(() => parseExecutionMetadata({ modules: 'vpc' })).toThrow(/execution_metadata\.modules/);
    const tooMany = Array.from({ length: MAX_REPORTED_MODULES + 1 }, () => ({ source: 'h/a/b/c', version: '1.0.0' }));
    expect(() => parseExecutionMetadata({ modules: tooMany })).toThrow(/execution_metadata\.modules/);
  });
});
