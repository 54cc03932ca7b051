/**
 * How the slow-link fault scenario reads its bulk log (`bulkLineNumbers`): a line OpenTofu's
 * `local-exec` line reader sent in two pieces still counts once, and a byte missing from the log
 * is still seen.
 */
import { describe, expect, it } from 'vitest';
import { bulkLineNumbers } from '../faults/bigTransfers.js';

const PREFIX = 'terraform_data.bulk (local-exec): ';
const line = (n: number) => `bulk ${String(n).padStart(7, '0')} ${'0'.repeat(990)}`;

describe('bulkLineNumbers', () => {
  it('reads every line once, in order, with the engine’s other lines between them', () => {
    const log = [1, 2, 3].map((n) => `${PREFIX}${line(n)}\n`).join('') + 'terraform_data.bulk: Still creating...\n';
    expect(bulkLineNumbers(`terraform_data.bulk: Creating...\n${log}`)).toEqual([1, 2, 3]);
  });

  it('joins a line the reader sent in two pieces, even when the cut is inside its number', () => {
    const second = line(2);
    const log = `${PREFIX}${line(1)}\n${PREFIX}${second.slice(0, 8)}\n${PREFIX}${second.slice(8)}\n${PREFIX}${line(3)}\n`;
    expect(bulkLineNumbers(log)).toEqual([1, 2, 3]);
  });

  it('misses a line that lost a byte', () => {
    const log = [line(1), line(2).slice(0, -1), line(3)].map((text) => `${PREFIX}${text}\n`).join('');
    expect(bulkLineNumbers(log)).toEqual([1, 3]);
  });
});
