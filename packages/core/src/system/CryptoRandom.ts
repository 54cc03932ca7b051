import { randomBytes, randomUUID } from 'node:crypto';
import type { Random } from '../ports/Random.js';

export class CryptoRandom implements Random {
  bytes(n: number): Uint8Array {
    return randomBytes(n);
  }
  uuid(): string {
    return randomUUID();
  }
}
