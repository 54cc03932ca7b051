import type { UserActor } from '../../domain/actors.js';
import { GIT_PROVIDERS, type GitProvider, isOneOf } from '../../domain/enums.js';
import { NotFoundError, ValidationError } from '../../domain/errors.js';
import { WEBHOOK_MODES, type WebhookMode } from '../../domain/vcs.js';
import { systemScope } from '../../ports/UnitOfWork.js';
import { recordAudit } from '../../usecases/audit.js';
import { type CoreDeps, isoNow } from '../../usecases/CoreDeps.js';
import { refuseOrganizationToken } from '../../usecases/personOnly.js';
import { connectorStillAdmin } from '../../usecases/vcsTokens.js';
import { repositoryIssue } from '../../vcs/connectInput.js';
import { deleteWebhook, hookFailure, personalProviderToken, providerPort } from '../../vcs/providerAccess.js';
import { RegistryNamespaces } from '../namespaces.js';
import { type ModuleAddress, requireModuleName, requireModuleSystem } from '../modules/records.js';
import type { ModuleRepository, ModuleTagResult } from './records.js';

/** `PUT /api/registry/module-repositories/{namespace}/{name}/{system}`, as received. */
export interface ConnectModuleRepositoryInput {
  provider?: unknown;
  repository?: unknown;
  webhook?: unknown;
}

/** A module repository as people see it: never its secret, except `webhook_secret` once in a manual connect's answer. */
export interface ModuleRepositoryView {
  id: string;
  namespace: string;
  name: string;
  system: string;
  provider: GitProvider;
  repository: string;
  webhook_mode: WebhookMode;
  /** Where the provider delivers: `<web URL>/api/webhooks/<provider>?module=<id>`. */
  webhook_url: string;
  hook_id: string | null;
  connected_by: string;
  /** `needs_reconnect` once the person who connected it is no longer an admin of the namespace. */
  status: 'connected' | 'needs_reconnect';
  last_tag: ModuleTagResult | null;
  created_at: string;
  updated_at: string;
  webhook_secret?: string;
}

const SECRET_BYTES = 32;

/** Where a module repository's webhook secret is bound when sealed: it opens for this one only. */
export function moduleWebhookSecretContext(id: string): string {
  return `registry-module-webhook:${id}`;
}

/**
 * Connecting a module of the registry to a git repository (issue 28): its semver tags publish
 * versions (`ModuleTagUseCases`). Connecting and disconnecting need `registry.manage` (admin) in
 * the namespace; reading `registry.read`. The hook is made with the connecting person's token
 * (`auto`), or pasted by them (`manual`, the secret shown once), as for git-driven runs.
 */
export class ModuleRepositoryUseCases {
  readonly namespaces: RegistryNamespaces;

  constructor(private readonly deps: CoreDeps) {
    this.namespaces = new RegistryNamespaces(deps);
  }

  async connect(
    actor: UserActor,
    address: ModuleAddress,
    input: ConnectModuleRepositoryInput,
  ): Promise<ModuleRepositoryView> {
    const name = requireModuleName(address.name);
    const system = requireModuleSystem(address.system);
    const { provider, repository, webhook } = parseInput(input);
    if (webhook === 'auto') refuseOrganizationToken(actor, "create a webhook with its creator's sign-in (use manual)");
    const port = providerPort(this.deps, provider);
    const namespace = await this.namespaces.resolve(actor, address.namespace, 'registry.manage');
    const previous = await this.deps.uow.read(namespace.scope, (stores) =>
      stores.moduleRepositories.get(namespace.ownerId, name, system),
    );
    const id = previous?.id ?? this.deps.random.uuid();
    const secret = Buffer.from(this.deps.random.bytes(SECRET_BYTES)).toString('hex');
    const token =
      webhook === 'auto' || previous?.hook_id ? await personalProviderToken(this.deps, actor, provider) : null;
    const details: Record<string, string | boolean | null> = {};
    if (previous?.hook_id) {
      const failure = await this.removeHook(previous, previous.provider === provider ? token : null);
      details.old_hook_removed = failure === null;
      if (failure !== null) details.old_hook_error = failure;
    }
    const hookId =
      webhook === 'auto'
        ? (
            await port.api.createHook(token as string, repository, {
              url: this.webhookUrl(provider, id),
              secret,
              tag_pushes: true,
            })
          ).hook_id
        : null;
    const now = isoNow(this.deps);
    const saved = await this.deps.uow.run(namespace.scope, async (stores) => {
      const stored = await stores.moduleRepositories.put({
        id,
        owner_id: namespace.ownerId,
        name,
        system,
        provider,
        repository,
        webhook_mode: webhook,
        hook_id: hookId,
        webhook_secret_sealed: await this.deps.secrets.seal(secret, moduleWebhookSecretContext(id)),
        connected_by: actor.userId,
        last_tag: previous?.last_tag ?? null,
        created_at: previous?.created_at ?? now,
        updated_at: now,
      });
      await recordAudit(stores, this.deps, actor, {
        action: 'module_repository.connect',
        target: { type: 'module_repository', id },
        owner_id: namespace.ownerId,
        details: {
          module: `${namespace.name}/${name}/${system}`,
          provider,
          repository,
          webhook_mode: webhook,
          hook_id: hookId,
          ...details,
        },
      });
      return stored;
    });
    const view = await this.view(namespace.name, saved);
    return webhook === 'manual' ? { ...view, webhook_secret: secret } : view;
  }

  /** The module's repository; `404 module_repository_not_found` when it has none. */
  async get(actor: UserActor, address: ModuleAddress): Promise<ModuleRepositoryView> {
    const name = requireModuleName(address.name);
    const system = requireModuleSystem(address.system);
    const namespace = await this.namespaces.resolve(actor, address.namespace, 'registry.read');
    const found = await this.deps.uow.read(namespace.scope, (stores) =>
      stores.moduleRepositories.get(namespace.ownerId, name, system),
    );
    if (!found) throw notConnected(`${namespace.name}/${name}/${system}`);
    return this.view(namespace.name, found);
  }

  /** The namespace's module repositories, by name then system. */
  async list(actor: UserActor, namespaceName: unknown): Promise<ModuleRepositoryView[]> {
    const namespace = await this.namespaces.resolve(actor, namespaceName, 'registry.read');
    const rows = await this.deps.uow.read(namespace.scope, (stores) =>
      stores.moduleRepositories.list(namespace.ownerId),
    );
    return Promise.all(rows.map((row) => this.view(namespace.name, row)));
  }

  /**
   * Removes the connection and the hook Trellis made (a failure to delete the hook is audited,
   * not fatal: deliveries to it then find no connection). Published versions stay.
   */
  async disconnect(actor: UserActor, address: ModuleAddress): Promise<void> {
    const name = requireModuleName(address.name);
    const system = requireModuleSystem(address.system);
    const namespace = await this.namespaces.resolve(actor, address.namespace, 'registry.manage');
    const found = await this.deps.uow.read(namespace.scope, (stores) =>
      stores.moduleRepositories.get(namespace.ownerId, name, system),
    );
    if (!found) throw notConnected(`${namespace.name}/${name}/${system}`);
    let hookError: string | null = null;
    if (found.hook_id) {
      try {
        hookError = await this.removeHook(found, await personalProviderToken(this.deps, actor, found.provider));
      } catch (error) {
        hookError = hookFailure(error);
      }
    }
    await this.deps.uow.run(namespace.scope, async (stores) => {
      await stores.moduleRepositories.delete(namespace.ownerId, found.id);
      await recordAudit(stores, this.deps, actor, {
        action: 'module_repository.disconnect',
        target: { type: 'module_repository', id: found.id },
        owner_id: namespace.ownerId,
        details: {
          module: `${namespace.name}/${name}/${system}`,
          provider: found.provider,
          repository: found.repository,
          hook_id: found.hook_id,
          ...(found.hook_id ? { hook_removed: hookError === null } : {}),
          ...(hookError !== null ? { hook_error: hookError } : {}),
        },
      });
    });
  }

  /** `<web URL>/api/webhooks/<provider>?module=<id>`: the same endpoint as git-driven runs, naming this connection. */
  webhookUrl(provider: GitProvider, id: string): string {
    const base = this.deps.settings.notifications.webUrl.replace(/\/+$/, '');
    return `${base}/api/webhooks/${provider}?module=${encodeURIComponent(id)}`;
  }

  private async view(namespace: string, row: ModuleRepository): Promise<ModuleRepositoryView> {
    const lending = await this.deps.uow.read(systemScope, (stores) => connectorStillAdmin(stores, row.owner_id, row));
    return {
      id: row.id,
      namespace,
      name: row.name,
      system: row.system,
      provider: row.provider,
      repository: row.repository,
      webhook_mode: row.webhook_mode,
      webhook_url: this.webhookUrl(row.provider, row.id),
      hook_id: row.hook_id,
      connected_by: row.connected_by,
      status: lending ? 'connected' : 'needs_reconnect',
      last_tag: row.last_tag,
      created_at: row.created_at,
      updated_at: row.updated_at,
    };
  }

  /** Deletes the connection's hook: null, or why not (a hook with no token to delete it with: `no_token`). */
  private async removeHook(row: ModuleRepository, token: string | null): Promise<string | null> {
    if (token === null && row.hook_id) return 'no_token';
    return deleteWebhook(this.deps, row, token);
  }
}

function parseInput(input: ConnectModuleRepositoryInput): {
  provider: GitProvider;
  repository: string;
  webhook: WebhookMode;
} {
  const issues: { path: string; message: string }[] = [];
  const provider = input.provider;
  if (!isOneOf(GIT_PROVIDERS, provider))
    issues.push({ path: 'provider', message: `must be one of ${GIT_PROVIDERS.join(', ')}` });
  const repository = typeof input.repository === 'string' ? input.repository.trim() : '';
  if (repository === '') issues.push({ path: 'repository', message: 'required: owner/name of the repository' });
  else if (isOneOf(GIT_PROVIDERS, provider)) {
    const issue = repositoryIssue(provider, repository);
    if (issue !== null) issues.push({ path: 'repository', message: `${JSON.stringify(repository)} ${issue}` });
  }
  const webhook = input.webhook ?? 'auto';
  if (!isOneOf(WEBHOOK_MODES, webhook))
    issues.push({ path: 'webhook', message: `must be one of ${WEBHOOK_MODES.join(', ')}` });
  if (issues.length > 0) {
    const said = issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ');
    throw new ValidationError(`the module repository connection is not valid (${said})`, issues);
  }
  return { provider: provider as GitProvider, repository, webhook: webhook as WebhookMode };
}

function notConnected(module: string): NotFoundError {
  return new NotFoundError(
    'module_repository',
    'module_repository_not_found',
    `the module ${module} is not connected to a repository (trellis modules connect)`,
  );
}
