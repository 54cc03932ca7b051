import type {
  DeliverySignatureCheck,
  VcsDelivery,
  VcsEvent,
  VcsWebhookReader,
  WebhookRequestParts,
} from '@trellis/core';
import { ValidationError } from '@trellis/core';
import { headerOf, hmacSha256Check, PayloadReader, payloadOf } from '../vcs/common.js';

const read = new PayloadReader('Bitbucket');

/**
 * Reads Bitbucket Cloud deliveries (`X-Event-Key`, `X-Request-UUID`), signed with
 * `X-Hub-Signature: sha256=<hex HMAC-SHA256 of the raw body>`.
 *
 * Bitbucket's push payloads never list changed files, so a push's `changed_files` is always null
 * (the diffstat API answers them). A push of several refs at once is read by its first change.
 */
export class BitbucketWebhookReader implements VcsWebhookReader {
  parse(request: WebhookRequestParts): VcsDelivery | null {
    const name = headerOf(request, 'x-event-key');
    if (!name) return null;
    const deliveryId = headerOf(request, 'x-request-uuid');
    if (!deliveryId) {
      throw new ValidationError('the Bitbucket delivery has no X-Request-UUID header', [
        { path: 'headers.x-request-uuid', message: 'missing' },
      ]);
    }
    return { provider: 'bitbucket', delivery_id: deliveryId, event: eventOf(name, request) };
  }

  signatureCheck(headers: WebhookRequestParts['headers'], secret: string): DeliverySignatureCheck {
    return hmacSha256Check(headerOf({ headers }, 'x-hub-signature'), secret);
  }
}

function eventOf(name: string, request: WebhookRequestParts): VcsEvent {
  if (name === 'repo:push') return pushOf(payloadOf(request, 'Bitbucket'));
  if (name === 'pullrequest:created' || name === 'pullrequest:updated') {
    const payload = payloadOf(request, 'Bitbucket');
    return {
      kind: 'pull_request',
      action: name === 'pullrequest:created' ? 'opened' : 'updated',
      repository: read.string(payload, 'repository.full_name'),
      number: read.integer(payload, 'pullrequest.id'),
      title: read.optionalString(payload, 'pullrequest.title') ?? '',
      url: read.string(payload, 'pullrequest.links.html.href'),
      head_sha: read.string(payload, 'pullrequest.source.commit.hash'),
      head_branch: read.string(payload, 'pullrequest.source.branch.name'),
      base_branch: read.string(payload, 'pullrequest.destination.branch.name'),
      author:
        read.optionalString(payload, 'pullrequest.author.display_name') ??
        read.optionalString(payload, 'pullrequest.author.nickname') ??
        '',
      fork: isFork(payload),
    };
  }
  return { kind: 'other', name };
}

/**
 * A pull request from another repository (a fork): its `source.repository` is not its
 * `destination.repository` (by uuid, else by full name). Unknown: a fork.
 */
function isFork(payload: Record<string, unknown>): boolean {
  for (const key of ['uuid', 'full_name']) {
    const source = read.optionalString(payload, `pullrequest.source.repository.${key}`);
    const destination = read.optionalString(payload, `pullrequest.destination.repository.${key}`);
    if (source !== null && destination !== null) return source.toLowerCase() !== destination.toLowerCase();
  }
  return true;
}

function pushOf(payload: Record<string, unknown>): VcsEvent {
  const change = read.list(payload, 'push.changes')[0];
  if (change === undefined) {
    throw new ValidationError('the Bitbucket push lists no change', [{ path: 'push.changes', message: 'empty' }]);
  }
  const next = read.object(change, 'new');
  const old = read.object(change, 'old');
  const ref = next ?? old;
  if (ref === null) {
    throw new ValidationError('the Bitbucket push change has neither new nor old', [
      { path: 'push.changes.0', message: 'expected new or old' },
    ]);
  }
  const deleted = next === null;
  return {
    kind: 'push',
    repository: read.string(payload, 'repository.full_name'),
    branch: read.string(ref, 'type') === 'branch' ? read.string(ref, 'name') : null,
    ...(read.string(ref, 'type') === 'tag' ? { tag: read.string(ref, 'name') } : {}),
    deleted,
    before_sha: read.optionalString(old, 'target.hash'),
    commit_sha: next ? read.string(next, 'target.hash') : read.string(old, 'target.hash'),
    commit_message: (next && read.optionalString(next, 'target.message')?.trimEnd()) || '',
    author:
      (next &&
        (read.optionalString(next, 'target.author.user.display_name') ??
          read.optionalString(next, 'target.author.raw'))) ||
      read.optionalString(payload, 'actor.display_name') ||
      '',
    sender_id: read.optionalString(payload, 'actor.uuid'),
    changed_files: deleted ? [] : null,
  };
}
