import { createHash } from 'node:crypto';
import { TooLargeError } from '../domain/errors.js';
import type { DeliverySignatureCheck, VcsWebhookReader, WebhookRequestParts } from '../ports/VcsApi.js';

/** Provider payloads of large pushes run to a few MiB; GitHub caps deliveries at 25 MB. */
export const MAX_WEBHOOK_BODY_BYTES = 25 * 1024 * 1024;

/** A delivery's body as it arrived, whether its signature matched, and its SHA-256 (hex). */
export interface ReadWebhookBody {
  rawBody: Buffer;
  signed: boolean;
  sha256: string;
}

function tooLarge(limit: number): TooLargeError {
  return new TooLargeError('webhook_too_large', `a webhook delivery must be at most ${limit} bytes`, limit);
}

/**
 * Reads a delivery's body once, chunk by chunk as it streams in: each chunk goes to the
 * signature check and to a SHA-256 (the key that recognizes a replayed body) before the next is
 * read, so no step hashes more than one chunk. A declared or actual size over `limit` is
 * `413 webhook_too_large`, with the rest left unread.
 */
export async function readWebhookBody(
  body: AsyncIterable<Uint8Array>,
  check: DeliverySignatureCheck,
  declaredBytes: number | null,
  limit = MAX_WEBHOOK_BODY_BYTES,
): Promise<ReadWebhookBody> {
  if (declaredBytes !== null && declaredBytes > limit) throw tooLarge(limit);
  const hash = createHash('sha256');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > limit) throw tooLarge(limit);
    check.update(chunk);
    hash.update(chunk);
    chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length));
  }
  return { rawBody: Buffer.concat(chunks, size), signed: check.matches(), sha256: hash.digest('hex') };
}

/** Whether a whole body already in memory is signed with `secret` (one check, fed at once). */
export function verifyDelivery(reader: VcsWebhookReader, request: WebhookRequestParts, secret: string): boolean {
  const check = reader.signatureCheck(request.headers, secret);
  check.update(request.rawBody);
  return check.matches();
}
