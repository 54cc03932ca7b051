/** One HTTP POST of a notification. */
export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  /**
   * Whether the address the request actually connects to may be private, loopback or
   * link-local. The sender checks every address it connects to (a second resolution at delivery
   * time cannot be rebound past it).
   */
  allowPrivateAddresses: boolean;
}

/** What came back: a status, or why none did. Never throws for the receiver's failures. */
export type WebhookResponse =
  | { kind: 'answered'; status: number; excerpt: string }
  | { kind: 'refused'; error: string }
  | { kind: 'failed'; error: string };

/**
 * Outbound HTTP for notifications (issue 14). Redirects are not followed (a 3xx is an answer),
 * and only the first bytes of an answer are read.
 */
export interface WebhookSender {
  /** The addresses `hostname` resolves to (all of them), to check a URL when it is saved. */
  resolve(hostname: string): Promise<string[]>;
  send(request: WebhookRequest): Promise<WebhookResponse>;
}
