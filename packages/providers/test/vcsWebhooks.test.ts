import { createHmac } from 'node:crypto';
import { ValidationError, type VcsEvent, verifyDelivery, type WebhookRequestParts } from '@trellis/core';
import { BitbucketWebhookReader, GitHubWebhookReader, GitLabWebhookReader } from '@trellis/providers';
import { describe, expect, it } from 'vitest';
import { vcsPayload } from './support/fixtures.js';

const SECRET = 'whsec-4f1c0d9a7e3b2a18c6d5';
const ZERO = '0000000000000000000000000000000000000000';

function sign(body: Buffer, secret = SECRET): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

const github = new GitHubWebhookReader();
const gitlab = new GitLabWebhookReader();
const bitbucket = new BitbucketWebhookReader();

function githubDelivery(event: string, name: string, headers: Record<string, string> = {}): WebhookRequestParts {
  const rawBody = vcsPayload('github', name);
  return {
    rawBody,
    headers: {
      'x-github-event': event,
      'x-github-delivery': `d-${name}`,
      'x-hub-signature-256': sign(rawBody),
      'content-type': 'application/json',
      ...headers,
    },
  };
}

function gitlabDelivery(event: string, name: string, headers: Record<string, string> = {}): WebhookRequestParts {
  return {
    rawBody: vcsPayload('gitlab', name),
    headers: { 'x-gitlab-event': event, 'x-gitlab-event-uuid': `u-${name}`, 'x-gitlab-token': SECRET, ...headers },
  };
}

function bitbucketDelivery(event: string, name: string, headers: Record<string, string> = {}): WebhookRequestParts {
  const rawBody = vcsPayload('bitbucket', name);
  return {
    rawBody,
    headers: { 'x-event-key': event, 'x-request-uuid': `r-${name}`, 'x-hub-signature': sign(rawBody), ...headers },
  };
}

const eventOf = (delivery: { event: VcsEvent } | null) => delivery?.event;

describe('GitHub webhook reader', () => {
  it('reads a push: branch, commits, head commit, and every file added, modified or removed', () => {
    expect(github.parse(githubDelivery('push', 'push'))).toEqual({
      provider: 'github',
      delivery_id: 'd-push',
      event: {
        kind: 'push',
        repository: 'acme-platform/infra-live',
        branch: 'main',
        deleted: false,
        before_sha: '7e2bbeac059d724b1d148ee6bc26b107289f35c3',
        commit_sha: '8457785ada4ab6182c16fbac60586081edf51999',
        commit_message: 'dns: add the status page record\n\nRequested by support.',
        author: 'Rosa Moreau',
        changed_files: ['infra/network/main.tf', 'infra/dns/status.tf', 'README.md', 'infra/dns/legacy.tf'],
        sender_id: '4411021',
      },
    });
  });

  it('has no file list for a push at the commit cap (truncated): compare answers it', () => {
    expect(eventOf(github.parse(githubDelivery('push', 'push-truncated')))).toMatchObject({
      kind: 'push',
      branch: 'main',
      before_sha: 'd60655969e989e68787b90fae490d4a9640e4abd',
      commit_sha: '15e2b226a8ec01e2f949d7e940a3a29029c2df4f',
      commit_message: 'chore: bump module pin 19',
      changed_files: null,
    });
  });

  it('has no file list when a commit lacks its file lists', () => {
    const payload = JSON.parse(vcsPayload('github', 'push').toString());
    delete payload.commits[0].modified;
    const rawBody = Buffer.from(JSON.stringify(payload));
    const event = eventOf(github.parse({ rawBody, headers: { 'x-github-event': 'push', 'x-github-delivery': 'd' } }));
    expect(event).toMatchObject({ kind: 'push', changed_files: null });
  });

  it('reads a tag push as branch null and a branch deletion as deleted', () => {
    expect(eventOf(github.parse(githubDelivery('push', 'push-tag')))).toEqual({
      kind: 'push',
      repository: 'acme-platform/infra-live',
      branch: null,
      tag: 'v1.4.0',
      deleted: false,
      before_sha: null,
      commit_sha: '8457785ada4ab6182c16fbac60586081edf51999',
      commit_message: 'dns: add the status page record\n\nRequested by support.',
      author: 'Rosa Moreau',
      changed_files: null,
      sender_id: '4411021',
    });
    expect(eventOf(github.parse(githubDelivery('push', 'push-branch-deleted')))).toEqual({
      kind: 'push',
      repository: 'acme-platform/infra-live',
      branch: 'feature/old-vpc',
      deleted: true,
      before_sha: '9b006dd9d81153bc19fd79485cb7f9fc593ee333',
      commit_sha: ZERO,
      commit_message: '',
      author: 'rmoreau',
      changed_files: [],
      sender_id: '4411021',
    });
  });

  it('reads ping, and pull requests opened, synchronize (updated) and reopened', () => {
    expect(github.parse(githubDelivery('ping', 'ping'))).toEqual({
      provider: 'github',
      delivery_id: 'd-ping',
      event: { kind: 'ping' },
    });
    const pullRequest = {
      kind: 'pull_request',
      repository: 'acme-platform/infra-live',
      number: 42,
      title: 'Move the NAT gateways to two zones',
      url: 'https://github.com/acme-platform/infra-live/pull/42',
      head_branch: 'feature/nat-zones',
      base_branch: 'main',
      author: 'jdiallo',
      fork: false,
    };
    expect(eventOf(github.parse(githubDelivery('pull_request', 'pull_request-opened')))).toEqual({
      ...pullRequest,
      action: 'opened',
      head_sha: '8b0baff713ddef5e79d9db0f3fa713ee8bd94512',
    });
    expect(eventOf(github.parse(githubDelivery('pull_request', 'pull_request-synchronize')))).toEqual({
      ...pullRequest,
      action: 'updated',
      head_sha: 'b153fec8150217a3b290abfc9d71d440e6954909',
    });
    expect(eventOf(github.parse(githubDelivery('pull_request', 'pull_request-reopened')))).toEqual({
      ...pullRequest,
      action: 'reopened',
      head_sha: 'b153fec8150217a3b290abfc9d71d440e6954909',
    });
  });

  it("reads a fork's pull request as a fork: its head repository is another one, or gone", () => {
    const delivery = githubDelivery('pull_request', 'pull_request-fork');
    expect(eventOf(github.parse(delivery))).toMatchObject({
      kind: 'pull_request',
      repository: 'acme-platform/infra-live',
      number: 43,
      head_sha: 'c3d1f0e4b2a59876fedcba0123456789abcdef01',
      author: 'mallory-dev',
      fork: true,
    });
    // The fork was deleted: GitHub sends `head.repo: null`.
    const payload = JSON.parse(delivery.rawBody.toString()) as { pull_request: { head: { repo: unknown } } };
    payload.pull_request.head.repo = null;
    const gone = { ...delivery, rawBody: Buffer.from(JSON.stringify(payload)) };
    expect(eventOf(github.parse(gone))).toMatchObject({ fork: true });
  });

  it('checks the signature as the body streams in, chunk by chunk', () => {
    const delivery = githubDelivery('push', 'push');
    const check = github.signatureCheck(delivery.headers, SECRET);
    for (let at = 0; at < delivery.rawBody.length; at += 13) check.update(delivery.rawBody.subarray(at, at + 13));
    expect(check.matches()).toBe(true);
    const wrong = github.signatureCheck(delivery.headers, SECRET);
    wrong.update(delivery.rawBody.subarray(1));
    expect(wrong.matches()).toBe(false);
  });

  it('reads other actions and events as other', () => {
    expect(eventOf(github.parse(githubDelivery('pull_request', 'pull_request-labeled')))).toEqual({
      kind: 'other',
      name: 'pull_request.labeled',
    });
    expect(eventOf(github.parse(githubDelivery('issues', 'issues-opened')))).toEqual({ kind: 'other', name: 'issues' });
  });

  it('is not a GitHub delivery without X-GitHub-Event; refuses one without a delivery id or with a bad body', () => {
    expect(github.parse({ rawBody: Buffer.from('{}'), headers: {} })).toBeNull();
    expect(() => github.parse({ rawBody: Buffer.from('{}'), headers: { 'x-github-event': 'push' } })).toThrow(
      ValidationError,
    );
    const headers = { 'x-github-event': 'push', 'x-github-delivery': 'd' };
    expect(() => github.parse({ rawBody: Buffer.from('{"ref":'), headers })).toThrow(ValidationError);
    expect(() => github.parse({ rawBody: Buffer.from('[1]'), headers })).toThrow(ValidationError);
    expect(() => github.parse({ rawBody: Buffer.from('{"ref":"refs/heads/main"}'), headers })).toThrow(
      /no string at before/,
    );
  });

  it('verifies X-Hub-Signature-256 over the raw bytes, in any header case', () => {
    const delivery = githubDelivery('push', 'push');
    expect(verifyDelivery(github, delivery, SECRET)).toBe(true);
    expect(verifyDelivery(github, delivery, 'another-secret')).toBe(false);
    expect(
      verifyDelivery(github, { ...delivery, rawBody: Buffer.concat([delivery.rawBody, Buffer.from(' ')]) }, SECRET),
    ).toBe(false);
    const { 'x-hub-signature-256': signature, ...unsigned } = delivery.headers;
    expect(verifyDelivery(github, { ...delivery, headers: unsigned }, SECRET)).toBe(false);
    expect(
      verifyDelivery(github, { ...delivery, headers: { ...unsigned, 'x-hub-signature-256': 'sha256=abc' } }, SECRET),
    ).toBe(false);
    expect(
      verifyDelivery(
        github,
        { ...delivery, headers: { ...unsigned, 'x-hub-signature': sign(delivery.rawBody) } },
        SECRET,
      ),
    ).toBe(false);
    expect(
      verifyDelivery(
        github,
        { ...delivery, headers: { ...unsigned, 'X-Hub-Signature-256': signature as string } },
        SECRET,
      ),
    ).toBe(true);
    expect(verifyDelivery(github, delivery, '')).toBe(false);
    const upper = { 'X-GitHub-Event': 'ping', 'X-GitHub-Delivery': 'D-1' };
    expect(github.parse({ rawBody: Buffer.from('{}'), headers: upper })).toEqual({
      provider: 'github',
      delivery_id: 'D-1',
      event: { kind: 'ping' },
    });
  });
});

describe('annotated tags', () => {
  const TAG_OBJECT = '1111111111111111111111111111111111111111';

  it("reads the commit an annotated tag points to, not the tag object (GitHub's head commit, GitLab's checkout_sha)", () => {
    const github = JSON.parse(vcsPayload('github', 'push-tag').toString('utf8'));
    github.after = TAG_OBJECT;
    const githubBody = Buffer.from(JSON.stringify(github));
    const fromGitHub = new GitHubWebhookReader().parse({
      rawBody: githubBody,
      headers: { 'x-github-event': 'push', 'x-github-delivery': 'd-annotated' },
    });
    expect(fromGitHub?.event).toMatchObject({ tag: 'v1.4.0', commit_sha: '8457785ada4ab6182c16fbac60586081edf51999' });

    const lab = JSON.parse(vcsPayload('gitlab', 'push-tag').toString('utf8'));
    lab.after = TAG_OBJECT;
    const fromGitLab = new GitLabWebhookReader().parse({
      rawBody: Buffer.from(JSON.stringify(lab)),
      headers: { 'x-gitlab-event': 'Tag Push Hook', 'x-gitlab-event-uuid': 'u-annotated' },
    });
    expect(fromGitLab?.event).toMatchObject({ tag: 'v2.0.0', commit_sha: 'e544cde93a077a14b1a2075ef74ea5416f7b8581' });
  });
});

describe('GitLab webhook reader', () => {
  it('reads a push with its files', () => {
    expect(gitlab.parse(gitlabDelivery('Push Hook', 'push'))).toEqual({
      provider: 'gitlab',
      delivery_id: 'u-push',
      event: {
        kind: 'push',
        repository: 'acme/platform/infra-live',
        branch: 'main',
        deleted: false,
        before_sha: '3efff8d78da1cb3bdbe0438fb541dd18b834dea7',
        commit_sha: 'd2d75d0a629f330208a3dd1e65620783162dd415',
        commit_message: 'iam: drop the unused deploy role\n',
        author: 'Kenji Watanabe',
        changed_files: ['infra/storage/bucket.tf', 'infra/iam/README.md', 'infra/iam/deploy.tf'],
        sender_id: '1120455',
      },
    });
  });

  it('has no file list when total_commits_count is over the listed commits', () => {
    expect(eventOf(gitlab.parse(gitlabDelivery('Push Hook', 'push-truncated')))).toMatchObject({
      kind: 'push',
      before_sha: '3caf45462fbbd917a462a1d48499637158761794',
      commit_sha: '4a8b6012cacd92e193c7a036b6745637f756dd0a',
      commit_message: 'chore: rotate key 19\n',
      changed_files: null,
    });
  });

  it('reads a tag push and a branch deletion', () => {
    expect(eventOf(gitlab.parse(gitlabDelivery('Tag Push Hook', 'push-tag')))).toEqual({
      kind: 'push',
      repository: 'acme/platform/infra-live',
      branch: null,
      tag: 'v2.0.0',
      deleted: false,
      before_sha: null,
      commit_sha: 'e544cde93a077a14b1a2075ef74ea5416f7b8581',
      commit_message: '',
      author: 'Kenji Watanabe',
      changed_files: null,
      sender_id: '1120455',
    });
    expect(eventOf(gitlab.parse(gitlabDelivery('Push Hook', 'push-branch-deleted')))).toEqual({
      kind: 'push',
      repository: 'acme/platform/infra-live',
      branch: 'feature/old-bucket',
      deleted: true,
      before_sha: '6cde038a6ff13fa726e4163296b192e48e1b1e8e',
      commit_sha: ZERO,
      commit_message: '',
      author: 'Kenji Watanabe',
      changed_files: [],
      sender_id: '1120455',
    });
  });

  it('reads merge requests opened, updated with new commits and reopened; other updates as other', () => {
    const mergeRequest = {
      kind: 'pull_request',
      repository: 'acme/platform/infra-live',
      number: 17,
      title: 'Split the state bucket per environment',
      url: 'https://gitlab.com/acme/platform/infra-live/-/merge_requests/17',
      head_branch: 'feature/split-state',
      base_branch: 'main',
      author: 'kwatanabe',
      fork: false,
    };
    expect(eventOf(gitlab.parse(gitlabDelivery('Merge Request Hook', 'merge_request-open')))).toEqual({
      ...mergeRequest,
      action: 'opened',
      head_sha: 'e509e165120e850b0741e7716ae33f0b96221da4',
    });
    expect(eventOf(gitlab.parse(gitlabDelivery('Merge Request Hook', 'merge_request-update')))).toEqual({
      ...mergeRequest,
      action: 'updated',
      head_sha: '6214caad9bbb78ccddb003d66b4b529ee9752efe',
    });
    expect(eventOf(gitlab.parse(gitlabDelivery('Merge Request Hook', 'merge_request-reopen')))).toEqual({
      ...mergeRequest,
      action: 'reopened',
      head_sha: '6214caad9bbb78ccddb003d66b4b529ee9752efe',
    });
    expect(eventOf(gitlab.parse(gitlabDelivery('Merge Request Hook', 'merge_request-update-title')))).toEqual({
      kind: 'other',
      name: 'Merge Request Hook.update',
    });
    expect(eventOf(gitlab.parse(gitlabDelivery('Merge Request Hook', 'merge_request-close')))).toEqual({
      kind: 'other',
      name: 'Merge Request Hook.close',
    });
    expect(eventOf(gitlab.parse(gitlabDelivery('Note Hook', 'note')))).toEqual({ kind: 'other', name: 'Note Hook' });
  });

  it("reads a fork's merge request as a fork: another source project", () => {
    expect(eventOf(gitlab.parse(gitlabDelivery('Merge Request Hook', 'merge_request-fork')))).toMatchObject({
      kind: 'pull_request',
      repository: 'acme/platform/infra-live',
      number: 18,
      head_sha: 'f1e2d3c4b5a6978877665544332211ffeeddccbb',
      head_branch: 'tidy-tags',
      fork: true,
    });
  });

  it('is not a GitLab delivery without X-Gitlab-Event; refuses one without a UUID or with a bad body', () => {
    expect(gitlab.parse({ rawBody: Buffer.from('{}'), headers: { 'x-github-event': 'push' } })).toBeNull();
    expect(() => gitlab.parse({ rawBody: Buffer.from('{}'), headers: { 'x-gitlab-event': 'Push Hook' } })).toThrow(
      ValidationError,
    );
    const headers = { 'x-gitlab-event': 'Merge Request Hook', 'x-gitlab-event-uuid': 'u' };
    expect(() => gitlab.parse({ rawBody: Buffer.from('not json'), headers })).toThrow(ValidationError);
    expect(() => gitlab.parse({ rawBody: Buffer.from('{"object_attributes":{"action":"open"}}'), headers })).toThrow(
      /path_with_namespace/,
    );
  });

  it('verifies X-Gitlab-Token against the secret', () => {
    const delivery = gitlabDelivery('Push Hook', 'push');
    expect(verifyDelivery(gitlab, delivery, SECRET)).toBe(true);
    expect(verifyDelivery(gitlab, delivery, `${SECRET}x`)).toBe(false);
    expect(verifyDelivery(gitlab, delivery, SECRET.slice(0, -1))).toBe(false);
    expect(
      verifyDelivery(
        gitlab,
        { ...delivery, headers: { ...delivery.headers, 'x-gitlab-token': 'x'.repeat(SECRET.length) } },
        SECRET,
      ),
    ).toBe(false);
    const { 'x-gitlab-token': _token, ...unsigned } = delivery.headers;
    expect(verifyDelivery(gitlab, { ...delivery, headers: unsigned }, SECRET)).toBe(false);
    expect(verifyDelivery(gitlab, { ...delivery, headers: { ...unsigned, 'X-Gitlab-Token': SECRET } }, SECRET)).toBe(
      true,
    );
    expect(verifyDelivery(gitlab, { ...delivery, headers: { ...unsigned, 'x-gitlab-token': '' } }, '')).toBe(false);
  });
});

describe('Bitbucket webhook reader', () => {
  it('reads a push (never with files: Bitbucket does not list them)', () => {
    expect(bitbucket.parse(bitbucketDelivery('repo:push', 'push'))).toEqual({
      provider: 'bitbucket',
      delivery_id: 'r-push',
      event: {
        kind: 'push',
        repository: 'acme-ops/infra-live',
        branch: 'main',
        deleted: false,
        before_sha: '5cdaf0501cb64aad72ea44167d3bc64a27028b7f',
        commit_sha: '0633961195c27d9d2445e233f84cf07b07986fab',
        commit_message: 'queues: alarm on old messages',
        author: 'Ines Carvalho',
        changed_files: null,
        sender_id: '{d2c1b0a9-8f7e-4d6c-9b5a-4f3e2d1c0b9a}',
      },
    });
    expect(eventOf(bitbucket.parse(bitbucketDelivery('repo:push', 'push-truncated')))).toMatchObject({
      kind: 'push',
      before_sha: 'd6e1b7d8439f5fab56095297f248dee91c593c50',
      commit_sha: '30b776a23a4e9abbd6195b04bd95b491de9bdc8c',
      changed_files: null,
    });
  });

  it('reads a tag push and a branch deletion', () => {
    expect(eventOf(bitbucket.parse(bitbucketDelivery('repo:push', 'push-tag')))).toEqual({
      kind: 'push',
      repository: 'acme-ops/infra-live',
      branch: null,
      tag: 'v3.1.0',
      deleted: false,
      before_sha: null,
      commit_sha: '0633961195c27d9d2445e233f84cf07b07986fab',
      commit_message: 'queues: alarm on old messages',
      author: 'Ines Carvalho',
      changed_files: null,
      sender_id: '{d2c1b0a9-8f7e-4d6c-9b5a-4f3e2d1c0b9a}',
    });
    expect(eventOf(bitbucket.parse(bitbucketDelivery('repo:push', 'push-branch-deleted')))).toEqual({
      kind: 'push',
      repository: 'acme-ops/infra-live',
      branch: 'feature/old-queue',
      deleted: true,
      before_sha: '34041172cbf2392092ad306b7dc9ecff5e3d15a7',
      commit_sha: '34041172cbf2392092ad306b7dc9ecff5e3d15a7',
      commit_message: '',
      author: 'Ines Carvalho',
      changed_files: [],
      sender_id: '{d2c1b0a9-8f7e-4d6c-9b5a-4f3e2d1c0b9a}',
    });
  });

  it('reads pull requests created and updated; others as other', () => {
    const pullRequest = {
      kind: 'pull_request',
      repository: 'acme-ops/infra-live',
      number: 9,
      title: 'Send alarms to the on-call channel',
      url: 'https://bitbucket.org/acme-ops/infra-live/pull-requests/9',
      head_branch: 'feature/oncall-alarms',
      base_branch: 'main',
      author: 'Ines Carvalho',
      fork: false,
    };
    expect(eventOf(bitbucket.parse(bitbucketDelivery('pullrequest:created', 'pullrequest-created')))).toEqual({
      ...pullRequest,
      action: 'opened',
      head_sha: '6ee7fa980f7b',
    });
    expect(eventOf(bitbucket.parse(bitbucketDelivery('pullrequest:updated', 'pullrequest-updated')))).toEqual({
      ...pullRequest,
      action: 'updated',
      head_sha: '9c0ec1c043c7',
    });
    expect(eventOf(bitbucket.parse(bitbucketDelivery('pullrequest:fulfilled', 'pullrequest-fulfilled')))).toEqual({
      kind: 'other',
      name: 'pullrequest:fulfilled',
    });
  });

  it("reads a fork's pull request as a fork: another source repository", () => {
    expect(eventOf(bitbucket.parse(bitbucketDelivery('pullrequest:created', 'pullrequest-fork')))).toMatchObject({
      kind: 'pull_request',
      repository: 'acme-ops/infra-live',
      number: 10,
      head_sha: 'a7b8c9d0e1f2',
      fork: true,
    });
  });

  it('is not a Bitbucket delivery without X-Event-Key; refuses one without a request UUID or with a bad body', () => {
    expect(bitbucket.parse({ rawBody: Buffer.from('{}'), headers: {} })).toBeNull();
    expect(() => bitbucket.parse({ rawBody: Buffer.from('{}'), headers: { 'x-event-key': 'repo:push' } })).toThrow(
      ValidationError,
    );
    const headers = { 'x-event-key': 'repo:push', 'x-request-uuid': 'r' };
    expect(() => bitbucket.parse({ rawBody: Buffer.from(''), headers })).toThrow(ValidationError);
    expect(() => bitbucket.parse({ rawBody: Buffer.from('{"push":{"changes":[]}}'), headers })).toThrow(
      ValidationError,
    );
  });

  it('verifies X-Hub-Signature (HMAC-SHA256)', () => {
    const delivery = bitbucketDelivery('repo:push', 'push');
    expect(verifyDelivery(bitbucket, delivery, SECRET)).toBe(true);
    expect(verifyDelivery(bitbucket, delivery, 'wrong')).toBe(false);
    const { 'x-hub-signature': signature, ...unsigned } = delivery.headers;
    expect(verifyDelivery(bitbucket, { ...delivery, headers: unsigned }, SECRET)).toBe(false);
    expect(
      verifyDelivery(bitbucket, { ...delivery, headers: { ...unsigned, 'x-hub-signature': `${signature}00` } }, SECRET),
    ).toBe(false);
    expect(
      verifyDelivery(
        bitbucket,
        { ...delivery, headers: { ...unsigned, 'x-hub-signature': (signature as string).replace('sha256=', 'sha1=') } },
        SECRET,
      ),
    ).toBe(false);
    expect(
      verifyDelivery(
        bitbucket,
        { ...delivery, headers: { ...unsigned, 'X-Hub-Signature': signature as string } },
        SECRET,
      ),
    ).toBe(true);
  });
});
