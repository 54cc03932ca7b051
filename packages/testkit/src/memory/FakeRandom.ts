import { createHash } from 'node:crypto';
import type { Random } from '@trellis/core';

/** Formats 16 bytes as a version 4, RFC 4122 variant UUID (the bits that say so are set here). */
export function uuidFromBytes(bytes: Uint8Array): string {
  if (bytes.length < 16) throw new RangeError('a UUID needs 16 bytes');
  const b = Buffer.from(bytes.subarray(0, 16));
  b[6] = ((b[6] as number) & 0x0f) | 0x40;
  b[8] = ((b[8] as number) & 0x3f) | 0x80;
  const hex = b.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * Deterministic randomness: SHA-256 of the seed and a counter, so bytes are uniform (what the
 * verification-code and token rules assume) and a test run is repeatable. Counts what it hands out.
 */
export class FakeRandom implements Random {
  private block = Buffer.alloc(0);
  private counter = 0;
  /** How many times `bytes` and `uuid` were called. */
  readonly calls = { bytes: 0, uuid: 0 };

  constructor(private readonly seed: string | number = 'trellis') {}

  bytes(n: number): Uint8Array {
    this.calls.bytes += 1;
    return this.next(n);
  }

  uuid(): string {
    this.calls.uuid += 1;
    return uuidFromBytes(this.next(16));
  }

  private next(n: number): Uint8Array {
    while (this.block.length < n) {
      const digest = createHash('sha256')
        .update(`${this.seed}:${this.counter++}`)
        .digest();
      this.block = Buffer.concat([this.block, digest]);
    }
    const out = new Uint8Array(this.block.subarray(0, n));
    this.block = this.block.subarray(n);
    return out;
  }
}

/**
 * Randomness a test scripts byte by byte: `bytes(n)` hands out the next `n` of `sequence` (then
 * zeros once it runs out), and uuids count up (`00000000-0000-4000-8000-000000000001`, ...).
 */
export class SequenceRandom implements Random {
  private position = 0;
  private uuids = 0;
  readonly calls = { bytes: 0, uuid: 0 };

  constructor(private readonly sequence: ArrayLike<number> = []) {}

  bytes(n: number): Uint8Array {
    this.calls.bytes += 1;
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = this.position < this.sequence.length ? this.sequence[this.position++]! : 0;
    return out;
  }

  uuid(): string {
    this.calls.uuid += 1;
    this.uuids += 1;
    return `00000000-0000-4000-8000-${this.uuids.toString(16).padStart(12, '0')}`;
  }

  /** How many scripted bytes were consumed. */
  get consumed(): number {
    return this.position;
  }
}
