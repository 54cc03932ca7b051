import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { type RetryClock, systemClock } from '@trellis/client';
import type { Workspace } from './Workspace.js';

/**
 * How long a plan's workspace is kept for its DEPLOY (issue 31). The control plane offers that
 * DEPLOY to this agent for a few seconds (`DEPLOY_OFFER_MS`); a person who reads the plan first
 * and deploys it minutes later is still likely to land here when the agent pool is small, so the
 * workspace waits longer than the offer, but not so long that disk fills with plans nobody deploys.
 */
export const WARM_KEEP_MS = 10 * 60_000;
/** At most this many plans' workspaces at once (one per vine), the oldest removed first. */
export const WARM_KEEP_MAX = 8;

/** A succeeded PLAN's workspace, kept for a DEPLOY of that very plan. */
export interface KeptPlan {
  vineId: string;
  planJobId: string;
  /** The PLAN's configuration hash: the DEPLOY's must be the same. */
  configHash: string;
  /** The sha256 of the plan file as made and uploaded: the file must still have it. */
  planSha256: string;
  /** Whether the configuration declares its own backend (else the agent's backend file is in `dir`). */
  ownBackend: boolean;
  workspace: Workspace;
  /** The engine's working directory in it (the source, `.terraform`, the lock file, the plan file). */
  dir: string;
  /** The plan file's path. */
  planFile: string;
}

/** What `take` needs of the claimed job. */
export interface ClaimedForWarm {
  job_type: string;
  vine_id: string | null;
  plan_job_id: string | null;
  config_hash: string;
}

/**
 * The agent's kept plan workspaces (issue 31): the latest succeeded PLAN's per vine, for a bounded
 * time and number. A claimed job of the vine takes the entry out whatever it is: a DEPLOY of that
 * plan with the same configuration hash, whose plan file still has its sha256, runs in it (no
 * download of the configuration or the plan, no `init`); anything else removes it and runs cold.
 * Only the source directory is kept: the variables files, the registry's CLI configuration, an
 * identity token and the policies are removed when the plan ends, and the DEPLOY writes its own.
 */
export class WarmWorkspaces {
  private readonly kept = new Map<string, KeptPlan & { until: number }>();

  /** `clock`: the agent's (its `now` alone is read); the real clock by default. */
  constructor(private readonly clock: Pick<RetryClock, 'now'> = systemClock) {}

  private now(): number {
    return this.clock.now().getTime();
  }

  /** Keeps `plan` (replacing the vine's previous one), with only its source directory left in it. */
  keep(plan: KeptPlan): void {
    this.drop(plan.vineId);
    this.expire();
    const top = relative(plan.workspace.root, plan.dir).split(/[\\/]/)[0] ?? '';
    for (const entry of readdirSync(plan.workspace.root)) {
      if (entry !== top) rmSync(join(plan.workspace.root, entry), { recursive: true, force: true, maxRetries: 3 });
    }
    this.kept.set(plan.vineId, { ...plan, until: this.now() + WARM_KEEP_MS });
    while (this.kept.size > WARM_KEEP_MAX) {
      const oldest = this.kept.keys().next().value as string;
      this.drop(oldest);
    }
  }

  /**
   * The kept workspace `job` may run in, taken out; null (the job runs cold) when none matches.
   * A job of a vine always takes that vine's entry out: whatever runs there next changes what the
   * kept workspace was planned against.
   */
  take(job: ClaimedForWarm): KeptPlan | null {
    this.expire();
    if (job.vine_id === null) return null;
    const plan = this.kept.get(job.vine_id);
    if (!plan) return null;
    this.kept.delete(job.vine_id);
    const matches =
      job.job_type === 'DEPLOY' &&
      job.plan_job_id === plan.planJobId &&
      job.config_hash === plan.configHash &&
      sha256Of(plan.planFile) === plan.planSha256;
    if (matches) return plan;
    plan.workspace.remove();
    return null;
  }

  /** How many workspaces are kept now. */
  get size(): number {
    return this.kept.size;
  }

  /** Removes every kept workspace (the agent stops). */
  clear(): void {
    for (const vineId of [...this.kept.keys()]) this.drop(vineId);
  }

  private expire(): void {
    const now = this.now();
    for (const [vineId, plan] of this.kept) if (plan.until <= now) this.drop(vineId);
  }

  private drop(vineId: string): void {
    const plan = this.kept.get(vineId);
    if (!plan) return;
    this.kept.delete(vineId);
    plan.workspace.remove();
  }
}

/** The file's sha256 (hex); null when it cannot be read. */
export function sha256Of(file: string): string | null {
  try {
    return createHash('sha256').update(readFileSync(file)).digest('hex');
  } catch {
    return null;
  }
}
