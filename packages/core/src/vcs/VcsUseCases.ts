import type { UserActor } from '../domain/actors.js';
import { GIT_PROVIDERS, type GitProvider } from '../domain/enums.js';
import { ConflictError, isDomainError, NotFoundError, ValidationError } from '../domain/errors.js';
import { gitSourceIssues } from '../domain/gitSource.js';
import type { Vine } from '../domain/records.js';
import type { OrgAction } from '../domain/roles.js';
import { isUuid } from '../domain/validation.js';
import type { ForkPullRequestMode, VcsConnection, WebhookMode } from '../domain/vcs.js';
import { type Scope, type Stores, systemScope } from '../ports/UnitOfWork.js';
import { type ConnectVcsInput, parseConnectInput } from './connectInput.js';
import { Access } from '../usecases/Access.js';
import { recordAudit } from '../usecases/audit.js';
import { type CoreDeps, isoNow } from '../usecases/CoreDeps.js';
import { connectorStillAdmin, sealWebhookSecret } from '../usecases/vcsTokens.js';
import { deleteWebhook, hookFailure, personalProviderToken, providerPort } from './providerAccess.js';
import { refuseOrganizationToken } from '../usecases/personOnly.js';

/** A connection as people see it: never the secret, except `webhook_secret` once in a manual connect's answer. */
export interface VcsConnectionView {
  vine_id: string;
  provider: GitProvider;
  repository: string;
  branch: string;
  paths: string[];
  auto_deploy: boolean;
  pull_requests: boolean;
  /** What pull requests from forks do (`FORK_PULL_REQUEST_MODES`; default `off`). */
  fork_pull_requests: ForkPullRequestMode;
  webhook_mode: WebhookMode;
  /** Where the provider sends deliveries: the server's public URL + `/api/webhooks/{provider}?vine={vine id}`. */
  webhook_url: string;
  /** The provider's id of the hook Trellis created (`auto`); null in `manual` mode. */
  hook_id: string | null;
  connected_by: string;
  /**
   * `needs_reconnect` when the person who connected it is no longer an admin of the owner (issue
   * 23): their token is not used, its jobs fail with that reason, no status or comment is posted,
   * until an admin connects it again; `connected` otherwise.
   */
  status: VcsConnectionStatus;
  created_at: string;
  updated_at: string;
  /** Only in the answer of a `manual` connect: paste it at the provider; it is never shown again. */
  webhook_secret?: string;
}

export const VCS_CONNECTION_STATUSES = ['connected', 'needs_reconnect'] as const;
export type VcsConnectionStatus = (typeof VCS_CONNECTION_STATUSES)[number];

/** Bytes of a webhook secret (sent as 64 hex characters). */
const SECRET_BYTES = 32;

/**
 * Connecting a vine to a repository (issue 13): pushes to its branch plan it, pull requests plan
 * it speculatively. Connecting makes the vine's source that repository (`git`, the branch as
 * `ref`); disconnecting leaves the source as it is.
 */
export class VcsUseCases {
  private readonly access: Access;

  constructor(private readonly deps: CoreDeps) {
    this.access = new Access(deps);
  }

  /**
   * Creates or replaces the connection. `auto`: a hook is created at the provider with the
   * connecting person's token (a previous hook of this vine is deleted first); `manual`: the answer
   * carries the secret once. `path` (the working directory inside the repository): absent keeps the
   * vine's current git path; null or "" means the repository's root.
   */
  async connect(user: UserActor, nameOrId: unknown, input: ConnectVcsInput): Promise<VcsConnectionView> {
    const parsed = parseConnectInput(input);
    if (parsed.webhook === 'auto')
      refuseOrganizationToken(user, "create a webhook with its creator's sign-in (use manual)");
    const port = providerPort(this.deps, parsed.provider);
    const { vine, scope } = await this.locate(user, nameOrId, 'vineyards.manage');
    const path = parsed.path !== undefined ? parsed.path : vine.source.type === 'git' ? vine.source.path : null;
    const url = port.cloneUrl(parsed.repository);
    const sourceIssues = gitSourceIssues({ url, ref: parsed.branch, path }, { allowFile: false }).map((issue) => ({
      path: issue.path === 'source.ref' ? 'branch' : issue.path === 'source.path' ? 'path' : 'repository',
      message: issue.message,
    }));
    if (sourceIssues.length > 0) throw new ValidationError('the repository connection is not valid', sourceIssues);

    const previous = await this.deps.uow.read(scope, async (stores) => {
      // Checked before any hook is touched, and again where the connection is written.
      if (parsed.webhook === 'manual') await this.requireManualRoom(stores, vine);
      return stores.vcs.get(vine.owner_id, vine.id);
    });
    const secret = Buffer.from(this.deps.random.bytes(SECRET_BYTES)).toString('hex');
    const webhookUrl = this.webhookUrl(parsed.provider, vine.id);
    const details: Record<string, string | boolean | null> = {};

    let hookId: string | null = null;
    // The connecting person's token creates the new hook (auto) and deletes the old one.
    const token = parsed.webhook === 'auto' ? await personalProviderToken(this.deps, user, parsed.provider) : null;
    if (previous?.hook_id) {
      // Replaced: the old hook goes first (the provider may refuse a second hook with the same URL).
      let failure: string | null;
      try {
        const oldToken =
          token !== null && previous.provider === parsed.provider
            ? token
            : await personalProviderToken(this.deps, user, previous.provider);
        failure = await deleteWebhook(this.deps, previous, oldToken);
      } catch (error) {
        failure = hookFailure(error);
      }
      details.old_hook_removed = failure === null;
      if (failure !== null) details.old_hook_error = failure;
    }
    if (parsed.webhook === 'auto') {
      const created = await port.api.createHook(token as string, parsed.repository, { url: webhookUrl, secret });
      hookId = created.hook_id;
    }

    const sealed = await sealWebhookSecret(this.deps.secrets, vine.id, secret);
    const now = isoNow(this.deps);
    const connection: VcsConnection = {
      vine_id: vine.id,
      owner_id: vine.owner_id,
      provider: parsed.provider,
      repository: parsed.repository,
      branch: parsed.branch,
      paths: parsed.paths,
      auto_deploy: parsed.auto_deploy,
      pull_requests: parsed.pull_requests,
      fork_pull_requests: parsed.fork_pull_requests,
      webhook_mode: parsed.webhook,
      hook_id: hookId,
      webhook_secret_sealed: sealed,
      connected_by: user.userId,
      created_at: previous?.created_at ?? now,
      updated_at: now,
    };
    const saved = await this.deps.uow.run(scope, async (stores) => {
      if (parsed.webhook === 'manual') await this.requireManualRoom(stores, vine);
      const stored = await stores.vcs.put(connection);
      await stores.vines.updateSettings(
        vine.owner_id,
        vine.id,
        { source: { type: 'git', url, ref: parsed.branch, path } },
        now,
      );
      await recordAudit(stores, this.deps, user, {
        action: 'vcs.connect',
        target: { type: 'vine', id: vine.id },
        owner_id: vine.owner_id,
        details: {
          provider: parsed.provider,
          repository: parsed.repository,
          branch: parsed.branch,
          webhook_mode: parsed.webhook,
          fork_pull_requests: parsed.fork_pull_requests,
          hook_id: hookId,
          ...details,
        },
      });
      return stored;
    });
    const view = await this.view(saved);
    return parsed.webhook === 'manual' ? { ...view, webhook_secret: secret } : view;
  }

  /** The vine's connection (never its secret); `404 vcs_not_connected` when it has none. */
  async get(user: UserActor, nameOrId: unknown): Promise<VcsConnectionView> {
    const { vine, scope } = await this.locate(user, nameOrId, 'read');
    const connection = await this.deps.uow.read(scope, (stores) => stores.vcs.get(vine.owner_id, vine.id));
    if (!connection) throw notConnected();
    return this.view(connection);
  }

  /** The git providers this server can connect vines to, in `GIT_PROVIDERS` order. */
  providers(): GitProvider[] {
    return GIT_PROVIDERS.filter((provider) => this.deps.vcs[provider] !== undefined);
  }

  /** The vine's connection, or null (for pages that show either). */
  async find(user: UserActor, nameOrId: unknown): Promise<VcsConnectionView | null> {
    try {
      return await this.get(user, nameOrId);
    } catch (error) {
      if (isDomainError(error) && error.code === 'vcs_not_connected') return null;
      throw error;
    }
  }

  /**
   * Removes the connection and the hook Trellis created. A provider failure deleting the hook
   * (token revoked, permission gone, provider down) does not keep the connection: it goes, the
   * audit entry says the hook was left (`hook_removed: false`, `hook_error`), and the person
   * deletes the hook at the provider (deliveries to it are refused: no connection). The vine's
   * source stays as it is.
   */
  async disconnect(user: UserActor, nameOrId: unknown): Promise<void> {
    const { vine, scope } = await this.locate(user, nameOrId, 'vineyards.manage');
    const connection = await this.deps.uow.read(scope, (stores) => stores.vcs.get(vine.owner_id, vine.id));
    if (!connection) throw notConnected();
    let hookError: string | null = null;
    if (connection.hook_id) {
      try {
        hookError = await deleteWebhook(
          this.deps,
          connection,
          await personalProviderToken(this.deps, user, connection.provider),
        );
      } catch (error) {
        hookError = hookFailure(error);
      }
    }
    await this.deps.uow.run(scope, async (stores) => {
      await stores.vcs.delete(vine.owner_id, vine.id);
      await recordAudit(stores, this.deps, user, {
        action: 'vcs.disconnect',
        target: { type: 'vine', id: vine.id },
        owner_id: vine.owner_id,
        details: {
          provider: connection.provider,
          repository: connection.repository,
          hook_id: connection.hook_id,
          ...(connection.hook_id ? { hook_removed: hookError === null } : {}),
          ...(hookError !== null ? { hook_error: hookError } : {}),
        },
      });
    });
  }

  /**
   * A manual webhook proves nothing about the repository (anyone may name any), so an owner's
   * manual connections are counted against `maxManualVcsConnections` (`409 vcs_connection_limit`);
   * the vine's own connection, being replaced, does not count.
   */
  private async requireManualRoom(stores: Stores, vine: Vine): Promise<void> {
    const limit = this.deps.settings.maxManualVcsConnections;
    const current = await stores.vcs.get(vine.owner_id, vine.id);
    const others = (await stores.vcs.countManual(vine.owner_id)) - (current?.webhook_mode === 'manual' ? 1 : 0);
    if (others >= limit) {
      throw new ConflictError(
        'vcs_connection_limit',
        `this owner already has ${others} repository connections with a manual webhook, the most this server allows (${limit}): disconnect one, or connect with an automatic webhook`,
      );
    }
  }

  /**
   * Where the provider delivers: `<web URL>/api/webhooks/<provider>?vine=<vine id>`. The query
   * names the connection: a delivery is checked against that connection's secret only (one
   * signature check per delivery, issue 23), and each connection's hook URL is unique (GitHub
   * refuses a second hook with the same URL on a repository).
   */
  private webhookUrl(provider: GitProvider, vineId: string): string {
    const base = this.deps.settings.notifications.webUrl.replace(/\/+$/, '');
    return `${base}/api/webhooks/${provider}?vine=${encodeURIComponent(vineId)}`;
  }

  /** The connection as people see it, with whether its person may still lend their token (system work: their memberships). */
  private async view(connection: VcsConnection): Promise<VcsConnectionView> {
    const lending = await this.deps.uow.read(systemScope, (stores) =>
      connectorStillAdmin(stores, connection.owner_id, connection),
    );
    return {
      vine_id: connection.vine_id,
      provider: connection.provider,
      repository: connection.repository,
      branch: connection.branch,
      paths: [...connection.paths],
      auto_deploy: connection.auto_deploy,
      pull_requests: connection.pull_requests,
      fork_pull_requests: connection.fork_pull_requests,
      webhook_mode: connection.webhook_mode,
      webhook_url: this.webhookUrl(connection.provider, connection.vine_id),
      hook_id: connection.hook_id,
      connected_by: connection.connected_by,
      status: lending ? 'connected' : 'needs_reconnect',
      created_at: connection.created_at,
      updated_at: connection.updated_at,
    };
  }

  /** The vine by id or name (as `GET /api/cli/configurations/{name}`), and the scope `action` is authorized in. */
  private async locate(user: UserActor, nameOrId: unknown, action: OrgAction): Promise<{ vine: Vine; scope: Scope }> {
    if (typeof nameOrId !== 'string' || nameOrId === '') throw new NotFoundError('configuration');
    const { record, scope } = await this.access.locate(
      user,
      action,
      'configuration_not_found',
      async (stores, ownerId) =>
        isUuid(nameOrId)
          ? ((await stores.vines.get(ownerId, nameOrId.toLowerCase())) ??
            (await stores.vines.findByName(ownerId, nameOrId)))
          : stores.vines.findByName(ownerId, nameOrId),
    );
    return { vine: record, scope };
  }
}

function notConnected(): NotFoundError {
  return new NotFoundError('vcs', 'vcs_not_connected', 'the configuration is not connected to a repository');
}
