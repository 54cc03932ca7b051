import type { VcsConnection } from '../domain/vcs.js';
import type { SecretBox } from '../ports/SecretBox.js';

/** The context a connection's webhook secret is sealed under: it opens for that vine's connection only. */
export function webhookSecretContext(vineId: string): string {
  return `vcs-webhook:${vineId}`;
}

/** Seals a fresh webhook secret for the vine's connection (`webhook_secret_sealed`). */
export function sealWebhookSecret(secrets: SecretBox, vineId: string, secret: string): Promise<string> {
  return secrets.seal(secret, webhookSecretContext(vineId));
}

/** The connection's webhook secret, to verify a delivery with. */
export function openWebhookSecret(
  secrets: SecretBox,
  connection: Pick<VcsConnection, 'vine_id' | 'webhook_secret_sealed'>,
): Promise<string> {
  return secrets.open(connection.webhook_secret_sealed, webhookSecretContext(connection.vine_id));
}
