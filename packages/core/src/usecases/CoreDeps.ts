import type { ArtifactStore } from '../ports/ArtifactStore.js';
import type { Clock } from '../ports/Clock.js';
import type { EventBus, TrellisEvent } from '../ports/EventBus.js';
import type { IdentityProvider, GitProvider } from '../domain/enums.js';
import type { Random } from '../ports/Random.js';
import type { RepositoryLister } from '../ports/RepositoryLister.js';
import type { SecretBox } from '../ports/SecretBox.js';
import type { SignInProvider } from '../ports/SignInProvider.js';
import type { TokenSigner } from '../ports/TokenSigner.js';
import type { UnitOfWork } from '../ports/UnitOfWork.js';

export interface CoreSettings {
  /** A worker silent this long is `OFFLINE` (SPEC §8: 60 s). */
  heartbeatTimeoutSeconds: number;
  /** `PROCESSING` jobs of a worker silent this long become `FAILED` (DESIGN §3: 120 s). */
  lostJobTimeoutSeconds: number;
  /** How long a cancelled job keeps being announced in heartbeat answers. */
  cancelNoticeSeconds: number;
  /** Agents are told to heartbeat this often (SPEC §4.2: 30 s). */
  heartbeatIntervalSeconds: number;
}

export const DEFAULT_CORE_SETTINGS: CoreSettings = {
  heartbeatTimeoutSeconds: 60,
  lostJobTimeoutSeconds: 120,
  cancelNoticeSeconds: 600,
  heartbeatIntervalSeconds: 30,
};

/** The sign-in providers and git hosts this server is configured for (absent: not configured). */
export interface ProviderPorts {
  signIn: Partial<Record<IdentityProvider, SignInProvider>>;
  repositories: Partial<Record<GitProvider, RepositoryLister>>;
}

export const NO_PROVIDERS: ProviderPorts = Object.freeze({ signIn: {}, repositories: {} });

export interface CoreDeps {
  uow: UnitOfWork;
  clock: Clock;
  random: Random;
  events: EventBus;
  artifacts: ArtifactStore;
  signer: TokenSigner;
  /** Encrypts provider tokens at rest. */
  secrets: SecretBox;
  providers: ProviderPorts;
  settings: CoreSettings;
}

/**
 * Events are announced after their transaction commits. Delivery is best effort: listeners
 * (SSE streams, long-polled claims) also re-read on a timer, so a lost event delays, never loses.
 */
export async function announce(events: EventBus, event: TrellisEvent): Promise<void> {
  try {
    await events.publish(event);
  } catch {
    // Deliberately ignored: the change is committed and readers poll as a fallback.
  }
}

export function isoNow(deps: Pick<CoreDeps, 'clock'>): string {
  return deps.clock.now().toISOString();
}

export function isoSecondsBefore(now: Date, seconds: number): string {
  return new Date(now.getTime() - seconds * 1000).toISOString();
}
