import {
  MAX_CONFIGURATION_ENTRIES,
  MAX_CONFIGURATION_UNPACKED_BYTES,
} from '../../configurationVersions/ConfigurationVersionUseCases.js';
import type { GitProvider } from '../../domain/enums.js';
import { isDomainError, UnauthorizedError, ValidationError } from '../../domain/errors.js';
import type { VcsEvent } from '../../domain/vcs.js';
import { isUuid } from '../../domain/validation.js';
import { ownerScope, systemScope } from '../../ports/UnitOfWork.js';
import { recordAudit } from '../../usecases/audit.js';
import { type CoreDeps, isoNow, type VcsPort } from '../../usecases/CoreDeps.js';
import { vcsTokenFor } from '../../usecases/vcsTokens.js';
import type { WebhookDeliveryRequest } from '../../vcs/GitEventUseCases.js';
import { readWebhookBody } from '../../vcs/webhookBody.js';
import type { RegistryModuleUseCases } from '../modules/RegistryModuleUseCases.js';
import { RegistryNamespaces } from '../namespaces.js';
import { moduleWebhookSecretContext } from './ModuleRepositoryUseCases.js';
import type { ModuleRepository, ModuleTagResult } from './records.js';
import { moduleVersionOfTag } from './tagVersions.js';

type PushEvent = Extract<VcsEvent, { kind: 'push' }>;

/** A module repository's delivery as it arrives: the connection its URL names (`?module=`). */
export interface ModuleDeliveryRequest extends Omit<WebhookDeliveryRequest, 'vine'> {
  module: unknown;
}

/** What a delivery did: the tag it read and what became of it; null for a ping, another event or a redelivery. */
export interface ModuleDeliveryOutcome {
  result: ModuleTagResult | null;
}

/**
 * Tags to module versions (issue 28), through the same webhook endpoint as git-driven runs: the
 * hook URL names the module repository (`?module=`), whose secret verifies the body as it streams
 * in. A push of a semver tag (`v1.2.0`, `1.2.0`) fetches the tagged commit's archive from the
 * provider with the connecting person's token (only while they are an admin of the namespace),
 * unwraps it so the tree is at the root, and publishes it through the module registry for the
 * namespace's owner (`module_version.publish` by the system, checked and immutable like an upload). A delivery acts once
 * (its id and its body's hash are remembered). What happened is kept on the connection
 * (`last_tag`) and audited (`module_repository.tag`); a failed publish is not retried by a
 * redelivery: push the tag again, or publish the version by upload.
 */
export class ModuleTagUseCases {
  private readonly namespaces: RegistryNamespaces;

  constructor(
    private readonly deps: CoreDeps,
    private readonly modules: Pick<RegistryModuleUseCases, 'publishIn'>,
  ) {
    this.namespaces = new RegistryNamespaces(deps);
  }

  /** `POST /api/webhooks/{provider}?module=`. `401 webhook_signature_invalid`, `413 webhook_too_large`. */
  async receive(provider: GitProvider, request: ModuleDeliveryRequest): Promise<ModuleDeliveryOutcome> {
    const ports = this.deps.vcs[provider];
    if (!ports) return { result: null };
    if (!isUuid(request.module)) {
      throw new ValidationError('the webhook URL names no module repository: use the webhook_url Trellis gave', [
        { path: 'query.module', message: 'the id of the module repository, as in its webhook_url' },
      ]);
    }
    const id = request.module.toLowerCase();
    const connection = await this.deps.uow.read(systemScope, (stores) => stores.moduleRepositories.findForDelivery(id));
    if (connection === null || connection.provider !== provider) return { result: null };
    const secret = await this.deps.secrets
      .open(connection.webhook_secret_sealed, moduleWebhookSecretContext(connection.id))
      .catch(() => null);
    if (secret === null) throw signatureInvalid();
    const body = await readWebhookBody(
      request.body,
      ports.webhooks.signatureCheck(request.headers, secret),
      request.declaredBytes,
    );
    if (!body.signed) throw signatureInvalid();
    const delivery = ports.webhooks.parse({ headers: request.headers, rawBody: body.rawBody });
    if (delivery === null) {
      throw new ValidationError(`this is not a ${provider} webhook delivery (no event header)`, [
        { path: 'headers', message: `missing the ${provider} event header` },
      ]);
    }
    const { event } = delivery;
    if (event.kind !== 'push' || event.tag === undefined || event.deleted) return { result: null };
    if (event.repository.toLowerCase() !== connection.repository.toLowerCase()) return { result: null };
    const keys = [`${delivery.delivery_id}/module:${id}`, `sha256:${body.sha256}/module:${id}`];
    const first = await this.deps.uow.run(systemScope, async (stores) => {
      let fresh = true;
      for (const key of keys) if (!(await stores.vcs.recordDelivery(provider, key, isoNow(this.deps)))) fresh = false;
      return fresh;
    });
    if (!first) return { result: null };
    const result = await this.publishTag(ports, connection, event, event.tag);
    await this.deps.uow.run(systemScope, async (stores) => {
      await stores.moduleRepositories.recordTag(connection.owner_id, connection.id, result);
      await recordAudit(stores, this.deps, 'system', {
        action: 'module_repository.tag',
        target: { type: 'module_repository', id: connection.id },
        owner_id: connection.owner_id,
        details: {
          module: `${connection.name}/${connection.system}`,
          repository: connection.repository,
          tag: result.tag,
          commit_sha: result.commit_sha,
          outcome: result.outcome,
          version: result.version,
          message: result.message,
          delivery_id: delivery.delivery_id,
        },
      });
    });
    return { result };
  }

  private async publishTag(
    ports: VcsPort,
    connection: ModuleRepository,
    event: PushEvent,
    tag: string,
  ): Promise<ModuleTagResult> {
    const base = { tag, commit_sha: event.commit_sha, at: isoNow(this.deps) };
    const version = moduleVersionOfTag(tag);
    if (version === null) {
      return { ...base, outcome: 'ignored', version: null, message: `${tag} is not a version tag (v1.2.0 or 1.2.0)` };
    }
    try {
      const { token, namespace } = await this.deps.uow.run(systemScope, async (stores) => ({
        // Only while the connecting person is still an admin of the namespace (needs_reconnect).
        token: await vcsTokenFor(stores, this.deps, connection),
        namespace: await this.namespaces.nameOf(stores, connection.owner_id),
      }));
      const archive = await ports.api.fetchArchive(token, connection.repository, event.commit_sha);
      const unwrapped = await this.deps.tarballs.unwrap(archive.body, {
        stripComponents: archive.strip_components,
        maxBytes: this.deps.settings.registry.moduleMaxBytes,
        maxUnpackedBytes: MAX_CONFIGURATION_UNPACKED_BYTES,
        maxEntries: MAX_CONFIGURATION_ENTRIES,
      });
      try {
        // For the namespace's owner itself, audited as the system (`module_version.publish`).
        await this.modules.publishIn(
          { name: namespace, ownerId: connection.owner_id, scope: ownerScope(connection.owner_id) },
          'system',
          { name: connection.name, system: connection.system, version },
          unwrapped.body,
        );
      } finally {
        await unwrapped.dispose();
      }
      return { ...base, outcome: 'published', version, message: null };
    } catch (error) {
      if (!isDomainError(error)) throw error;
      const outcome = error.code === 'module_version_exists' ? 'ignored' : 'failed';
      return { ...base, outcome, version, message: `${error.code}: ${error.message}` };
    }
  }
}

function signatureInvalid(): UnauthorizedError {
  return new UnauthorizedError(
    'webhook_signature_invalid',
    'the delivery is not signed with the webhook secret of the connection its URL names',
  );
}
