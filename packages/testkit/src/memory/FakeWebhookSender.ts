import type { WebhookRequest, WebhookResponse, WebhookSender } from '@trellis/core';

/**
 * A WebhookSender that sends nothing: it records each request and answers what the test queued
 * (`200` when nothing is queued). Hostnames resolve from `addresses` (default: a public address).
 */
export class FakeWebhookSender implements WebhookSender {
  readonly requests: WebhookRequest[] = [];
  private readonly answers: WebhookResponse[] = [];

  constructor(private readonly addresses: Record<string, string[]> = {}) {}

  /** The answers of the next sends, in order. */
  answer(...responses: WebhookResponse[]): void {
    this.answers.push(...responses);
  }

  async resolve(hostname: string): Promise<string[]> {
    return this.addresses[hostname] ?? ['93.184.216.34'];
  }

  async send(request: WebhookRequest): Promise<WebhookResponse> {
    this.requests.push(request);
    return this.answers.shift() ?? { kind: 'answered', status: 200, excerpt: 'ok' };
  }
}
