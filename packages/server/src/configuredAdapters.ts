import { OpenPgpVerifier, TarGzChecker } from '@trellis/artifacts-fs';
import {
  AesGcmSecretBox,
  type ArtifactStore,
  CryptoRandom,
  type EventBus,
  type Clock,
  type Random,
} from '@trellis/core';
import { JoseJwsSigner, JwtTokenSigner } from '@trellis/http';
import { NodeWebhookSender } from '@trellis/providers';
import type { DatabaseAdapter } from './adapters.js';
import type { ServerConfig } from './config.js';
import type { Adapters } from './container.js';
import type { PortRegistrations } from './controlPlaneTypes.js';
import { coreSettings } from './coreSettings.js';
import { OpaPolicyCompiler } from './OpaPolicyCompiler.js';
import { mirrorUpstreamRegistry } from './mirrorUpstream.js';
import { buildProviders, buildVcs } from './providers.js';
import type { PublicUrl } from './publicUrl.js';

export interface AdapterSources {
  config: ServerConfig;
  /** The embedder's own implementations, which win over the configured ones. */
  register: PortRegistrations;
  database: DatabaseAdapter;
  publicUrl: PublicUrl;
  clock: Clock;
  random: Random | undefined;
}

/**
 * The adapters of core's ports as the configuration names them, each replaced by the embedder's
 * own when registered (`ControlPlaneOptions.register`). The artifact store and the event bus are
 * opened (and metered) by the caller, which also closes them.
 */
export function configuredAdapters(
  { config, register, database, publicUrl, clock, random }: AdapterSources,
  opened: { artifacts: ArtifactStore; events: EventBus },
): Adapters {
  return {
    uow: register.unitOfWork ?? database.uow,
    artifacts: opened.artifacts,
    events: opened.events,
    clock,
    random: register.random ?? random ?? new CryptoRandom(),
    signer: register.tokenSigner ?? new JwtTokenSigner(config.cliJwtSecret, clock),
    // Provider tokens at rest: TRELLIS_ENCRYPTION_KEY, or a key derived from CLI_JWT_SECRET.
    secrets:
      register.secretBox ??
      (config.encryptionKeys.length > 0
        ? new AesGcmSecretBox(config.encryptionKeys)
        : AesGcmSecretBox.fromSecret(config.cliJwtSecret)),
    providers: register.providers ?? buildProviders(config),
    vcs: register.vcs ?? buildVcs(config),
    webhooks: register.webhookSender ?? new NodeWebhookSender(),
    policyCompiler:
      register.policyCompiler ??
      new OpaPolicyCompiler(config.opaBin, {
        concurrency: config.policyCheckConcurrency,
        queue: config.policyCheckQueue,
      }),
    jws: register.jwsSigner ?? new JoseJwsSigner(),
    rateLimits: database.rateLimits,
    tarballs: new TarGzChecker(),
    pgp: new OpenPgpVerifier(),
    upstreamRegistry: mirrorUpstreamRegistry(config),
    settings: register.settings ?? coreSettings(config, publicUrl),
  };
}
