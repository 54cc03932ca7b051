/**
 * What the core's webhook tests share: a provider-neutral webhook reader (the body is the
 * normalized event itself, signed with an HMAC header) that counts its signature checks, and the
 * delivery request a hook URL naming a vine makes.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type {
  DeliverySignatureCheck,
  VcsDelivery,
  VcsEvent,
  VcsWebhookReader,
  WebhookDeliveryRequest,
  WebhookRequestParts,
} from '@trellis/core';

export function sign(body: Buffer, secret: string): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}

export class TestWebhookReader implements VcsWebhookReader {
  /** How many signature checks deliveries cost (one HMAC each). */
  checks = 0;

  signatureCheck(headers: WebhookRequestParts['headers'], secret: string): DeliverySignatureCheck {
    this.checks += 1;
    const hmac = createHmac('sha256', secret);
    return {
      update: (chunk) => {
        hmac.update(chunk);
      },
      matches: () => {
        const given = Buffer.from(headers['x-test-signature'] ?? '');
        const expected = Buffer.from(hmac.digest('hex'));
        return given.length === expected.length && timingSafeEqual(given, expected);
      },
    };
  }

  parse(request: WebhookRequestParts): VcsDelivery | null {
    const id = request.headers['x-test-delivery'];
    if (id === undefined) return null;
    return { provider: 'github', delivery_id: id, event: JSON.parse(request.rawBody.toString()) as VcsEvent };
  }
}

/** The body as a stream of small chunks, as a socket gives it. */
async function* chunked(body: Buffer, size = 7): AsyncIterable<Uint8Array> {
  for (let at = 0; at < body.length; at += size) yield body.subarray(at, at + size);
}

/** A delivery of `body` to the hook URL of `vine`, signed with `secret` (null: unsigned). */
export function deliveryOf(
  vine: unknown,
  body: Buffer,
  secret: string | null,
  id: string | null,
  chunkSize = 7,
): WebhookDeliveryRequest {
  return {
    vine,
    headers: {
      ...(id === null ? {} : { 'x-test-delivery': id }),
      ...(secret === null ? {} : { 'x-test-signature': sign(body, secret) }),
    },
    body: chunked(body, chunkSize),
    declaredBytes: body.length,
  };
}

/** A delivery of a normalized event. */
export function eventDelivery(
  vine: unknown,
  event: VcsEvent,
  secret: string | null,
  id: string,
): WebhookDeliveryRequest {
  return deliveryOf(vine, Buffer.from(JSON.stringify(event)), secret, id);
}
