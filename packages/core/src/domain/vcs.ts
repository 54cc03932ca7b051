/**
 * Git-driven runs (issue 13): what a git provider tells Trellis through its webhooks, once the
 * provider's own payload shape has been translated away, and what Trellis tells the provider
 * back (commit statuses and pull request comments).
 */
import type { GitProvider } from './enums.js';

/** A delivery's event, normalized from the provider's payload. */
export type VcsEvent =
  | { kind: 'ping' }
  | {
      kind: 'push';
      /** `owner/name` (GitLab: the full namespace path; Bitbucket: `workspace/slug`). */
      repository: string;
      /** The branch pushed to; null for a tag push. */
      branch: string | null;
      /**
       * The tag pushed (`v1.2.0`, without `refs/tags/`); absent for a branch push. A connected
       * module's repository publishes its semver tags (issue 28, `registry/gitTags`).
       */
      tag?: string;
      /** True when the push deleted the branch (nothing to plan). */
      deleted: boolean;
      /** The commit before the push; null for a new branch. */
      before_sha: string | null;
      /** The head commit after the push. */
      commit_sha: string;
      commit_message: string;
      /** Who wrote the head commit (name, else login or email). */
      author: string;
      /**
       * The provider's id of the account that pushed (GitHub `sender.id`, GitLab `user_id`,
       * Bitbucket `actor.uuid`), as sign-in records it; null when the payload names none. The
       * Trellis user signed in with it caused the push's plan (issue 23).
       */
      sender_id?: string | null;
      /**
       * Every file the push's commits added, modified or removed; null when the payload does not
       * list them all (truncated: ask the provider's compare API between `before_sha` and `commit_sha`).
       */
      changed_files: string[] | null;
    }
  | {
      kind: 'pull_request';
      action: 'opened' | 'updated' | 'reopened';
      repository: string;
      /** GitHub's pull request number, GitLab's merge request `iid`, Bitbucket's pull request id. */
      number: number;
      title: string;
      /** The pull request's page at the provider. */
      url: string;
      head_sha: string;
      head_branch: string;
      /** The branch the pull request merges into. */
      base_branch: string;
      author: string;
      /**
       * Whether the head commit comes from another repository than the one the pull request merges
       * into (a fork): GitHub's `head.repo` differs from `base.repo` (or is gone), GitLab's
       * `source_project_id` from `target_project_id`, Bitbucket's `source.repository` from
       * `destination.repository`. Its code is anyone's: see `FORK_PULL_REQUEST_MODES`.
       */
      fork: boolean;
    }
  /** Any other event or action: answered 202 and ignored. */
  | { kind: 'other'; name: string };

/** Whether `sha` is a full 40-character commit SHA (lower-case hex), not a prefix. */
export function isFullCommitSha(sha: string): boolean {
  return /^[0-9a-f]{40}$/.test(sha);
}

/** One webhook delivery as received. */
export interface VcsDelivery {
  provider: GitProvider;
  /** `X-GitHub-Delivery`, `X-Gitlab-Event-UUID`, `X-Request-UUID`: a redelivery repeats it. */
  delivery_id: string;
  event: VcsEvent;
}

/**
 * The state of a commit status as Trellis reports it; each adapter maps it to its provider's words.
 * `neutral`: Trellis chose not to run (a fork's pull request while the connection plans none):
 * GitLab `skipped`, Bitbucket `STOPPED`; GitHub's statuses have no neutral state, so `error`
 * (nothing was checked), with the reason in the description.
 */
export const COMMIT_STATES = ['pending', 'success', 'failure', 'error', 'neutral'] as const;
export type CommitState = (typeof COMMIT_STATES)[number];

export interface CommitStatus {
  state: CommitState;
  /** `trellis/<vineyard>/<vine>`: one status per vine. */
  context: string;
  description: string;
  /** The job's page. */
  target_url: string;
}

/** The webhook Trellis asks the provider to create for a connection. */
export interface HookRequest {
  url: string;
  secret: string;
  /**
   * Whether the hook must deliver tag pushes (a registry module's repository, issue 28): GitLab
   * subscribes to them apart (`tag_push_events`); GitHub's and Bitbucket's push events carry them.
   */
  tag_pushes?: boolean;
}

export const WEBHOOK_MODES = ['auto', 'manual'] as const;
export type WebhookMode = (typeof WEBHOOK_MODES)[number];

/**
 * What a connection does with pull requests from forks (issue 23), whose code anyone may write:
 * `off` (the default) plans none and leaves a neutral commit status saying so; `without_secrets`
 * plans them with no sensitive variables, no cloud identity, no identity token and no clone
 * credentials; `with_secrets` plans them like the repository's own pull requests. No pull
 * request's plan ever writes or locks the vine's state.
 */
export const FORK_PULL_REQUEST_MODES = ['off', 'without_secrets', 'with_secrets'] as const;
export type ForkPullRequestMode = (typeof FORK_PULL_REQUEST_MODES)[number];

/**
 * Whether a push's commit is newer than the newest commit its vine deployed (or is deploying, or
 * heard of in an earlier push), by the provider's compare API (issue 23): `auto_deploy` deploys
 * only `newer` ones. `unknown`: the provider could not say.
 */
export const PUSH_ANCESTRIES = ['newer', 'not_newer', 'unknown'] as const;
export type PushAncestry = (typeof PUSH_ANCESTRIES)[number];

/** How `head` stands to `base` in the repository's history (GitHub's compare `status`). */
export type CommitRelation = 'ahead' | 'behind' | 'identical' | 'diverged';

/**
 * A vine's connection to a repository (`PUT /api/cli/configurations/{id}/vcs`): pushes to
 * `branch` that touch `paths` plan the vine, pull requests into `branch` plan it speculatively.
 * One connection per vine; it belongs to the vine's owner.
 */
export interface VcsConnection {
  vine_id: string;
  owner_id: string;
  provider: GitProvider;
  /** `owner/name` as the provider spells it. */
  repository: string;
  branch: string;
  /** Glob patterns of repository paths (`infra/**`); empty: every file. */
  paths: string[];
  auto_deploy: boolean;
  pull_requests: boolean;
  fork_pull_requests: ForkPullRequestMode;
  webhook_mode: WebhookMode;
  /** The provider's id of the hook Trellis created (`auto`); null in `manual` mode. */
  hook_id: string | null;
  /** The webhook secret, sealed with the server's SecretBox; never leaves the server after the connect answer. */
  webhook_secret_sealed: string;
  /** The person who connected it: their stored provider token creates the hook, reports statuses and clones. */
  connected_by: string;
  created_at: string;
  updated_at: string;
}

/** Why a git-driven job was queued (the `push` and `pull_request` members of `JobTrigger`). */
export type VcsJobTrigger =
  | {
      type: 'push';
      provider: GitProvider;
      repository: string;
      branch: string;
      commit_sha: string;
      commit_message: string;
      author: string;
      /**
       * Checked when the connection auto-deploys: whether the commit is newer than what the vine
       * deployed or heard of before (`PUSH_ANCESTRIES`). Absent: not checked, never auto-deployed.
       */
      ancestry?: PushAncestry;
    }
  | {
      type: 'pull_request';
      provider: GitProvider;
      repository: string;
      number: number;
      title: string;
      url: string;
      head_sha: string;
      head_branch: string;
      base_branch: string;
      author: string;
      /** The head is in a fork (absent on jobs queued before forks were told apart: false). */
      fork?: boolean;
      /**
       * The plan runs without the vine's secrets: no sensitive variables, no cloud identity, no
       * identity token, no clone credentials (a fork's pull request, `without_secrets`).
       */
      secrets_withheld?: boolean;
    };
