import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const CHECK = fileURLToPath(new URL('./recordTypes.check.ts', import.meta.url));
const BROKEN = fileURLToPath(new URL('./recordTypes.broken.check.ts', import.meta.url));

/** The compiler's complaints about each file, with the repository's compiler options (one program). */
function diagnosticsOf(files: string[]): Map<string, string[]> {
  const config = ts.readConfigFile(`${root}tsconfig.base.json`, ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
  const program = ts.createProgram(files, {
    ...options,
    noEmit: true,
    composite: false,
    declaration: false,
    declarationMap: false,
  });
  const complaints = new Map(files.map((file) => [file, [] as string[]]));
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const file = diagnostic.file?.fileName ?? '(options)';
    const list = complaints.get(file) ?? complaints.set(file, []).get(file)!;
    list.push(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
  }
  return complaints;
}

describe("core's records and the contract's schemas (issue 29)", () => {
  const complaints = diagnosticsOf([CHECK, BROKEN]);

  it('are the same types, pair by pair (recordTypes.check.ts compiles)', () => {
    expect(Object.fromEntries([...complaints].filter(([file]) => file !== BROKEN))).toEqual({ [CHECK]: [] });
  });

  it('a pair that differs fails to compile (the check can fail)', () => {
    const broken = complaints.get(BROKEN) ?? [];
    expect(broken).toHaveLength(1);
    expect(broken[0]).toContain('does not satisfy');
  });
});
