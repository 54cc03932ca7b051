import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { type RetryClock, retry, systemClock, TrellisApiError, type TrellisClient } from '@trellis/client';
import type { ClaimAnswer as ClaimedJob } from '@trellis/client';
import type {
  CloudIdentitySettings,
  EngineName,
  JsonObject,
  PolicyResult,
  UploadedSource,
  Variables,
  VineSource,
} from '@trellis/core';
import { type AssumeRole, type CloudIdentityRef, withAwsCredentials } from '../cloud/assumeRole.js';
import { withOidcCredentials } from '../cloud/oidc.js';
import { Engine, resolveEngineBin } from '../engine/Engine.js';
import type { PhaseGate } from '../daemon/LeaseFence.js';
import type { AgentLogger } from '../logging/AgentLogger.js';
import type { JobLog } from '../logs/JobLog.js';
import { evaluatePolicies, summarizePolicyResults } from '../policy/evaluatePolicies.js';
import { resolveOpaBin } from '../policy/opa.js';
import type { SecretSet } from '../logs/Redactor.js';
import { parseDeployMetadata } from './deployMetadata.js';
import { engineEnvironment, withStateCredentials } from './engineEnvironment.js';
import { hostCliConfig, jobCliConfig, withCliConfig } from './cliConfig.js';
import { withPluginCache } from './pluginCache.js';
import { runOptionArgs } from './runOptions.js';
import { writeVariablesFiles } from './variablesFile.js';
import { JobFailure, JobInterrupted } from './errors.js';
import { saveMeasured } from './measuredDownload.js';
import { outputsMetadata, resourceChanges, summarizePlan } from './executionMetadata.js';
import { installedModulesMetadata } from './installedModules.js';
import { planChangeDocument } from './planChangeDocument.js';
import { cloneGitSource, displayUrl, hostGit, safeJoin, writeInlineFiles } from './fetchSource.js';
import {
  type ConfigurationVersionClaim,
  downloadConfigurationVersion,
  unpackConfigurationVersion,
} from './configurationVersion.js';
import type { RunnerSettings } from './JobRunner.js';
import { declaresBackend, stateAddress, writeBackendFile } from './stateBackend.js';
import type { KeptPlan } from './WarmWorkspaces.js';
import type { Workspace } from './Workspace.js';

export const PLAN_FILE = 'terraform.plan.out';
/** The server's limit (DESIGN §4); checked here to fail with a clear message before uploading. */
const MAX_PLAN_BYTES = 50 * 1024 * 1024;

export interface StepDeps {
  client: TrellisClient;
  settings: RunnerSettings;
  logger: AgentLogger;
  assumeRole: AssumeRole;
  log: JobLog;
  secrets: SecretSet;
  claimed: ClaimedJob;
  clock?: RetryClock | undefined;
  /** The agent's fence: each engine command waits while the agent is fenced (none: never waits). */
  gate?: PhaseGate | undefined;
}

/** Engine commands that change infrastructure: never interrupted because the job was lost (issue 30). */
const CHANGING_COMMANDS = new Set(['apply', 'destroy']);

/** What each job type does with the engine (issue 4, DESIGN §7). */
export class JobSteps {
  private engine: Engine | null = null;
  private interrupted = false;
  /** Aborted with `interrupt()` and `stopAfterCurrent()`: ends a wait at the fence. */
  private readonly interruption = new AbortController();
  /** The job's variables files, once the source is prepared (none without variables). */
  private varFiles: string[] = [];
  /** The engine's working directory when its state is the control plane's, with the job's state token. */
  private controlPlaneState: { dir: string; vineId: string; stateToken: string } | null = null;
  /**
   * A PLAN's workspace that may be kept for its DEPLOY (issue 31), once its plan file is stored
   * with the sha256 made here: where the engine ran, whether the configuration declares its own
   * backend (the agent's backend file is then absent), the plan file and its sha256.
   */
  private made: { dir: string; ownBackend: boolean; planFile: string; planSha256: string } | null = null;
  /** Whether the configuration declares its own backend (set once the source is prepared). */
  private ownBackend = false;

  constructor(private readonly deps: StepDeps) {}

  /**
   * Where the engine may have left a final state it could not store in the control plane
   * (`errored.tfstate`), with what the agent pushes it with; null when the state is elsewhere.
   */
  get stateOfControlPlane(): { dir: string; vineId: string; stateToken: string } | null {
    return this.controlPlaneState;
  }

  interrupt(): void {
    this.interrupted = true;
    this.interruption.abort();
    this.engine?.interrupt();
  }

  /** Whether the engine is applying or destroying now: changing infrastructure. */
  get changingInfrastructure(): boolean {
    const running = this.engine?.running ?? null;
    return running !== null && CHANGING_COMMANDS.has(running);
  }

  /** Lets the running engine command end on its own; no further command or step starts. */
  stopAfterCurrent(): void {
    this.interrupted = true;
    this.interruption.abort();
    this.engine?.stopAfterCurrent();
  }

  /** Before each engine command: while the agent is fenced, the command waits (the job log says so). */
  private async beforeCommand(command: string): Promise<void> {
    const gate = this.deps.gate;
    if (!gate?.fenced) return;
    this.deps.log.system(
      `the agent has not reached the control plane for most of the lost-job timeout: \`${command}\` waits until it does`,
    );
    this.deps.logger.warn('fenced: the next engine command waits for the control plane', { command });
    await gate.whileFenced(this.interruption.signal);
  }

  /** What a succeeded PLAN leaves to keep for its DEPLOY (issue 31); null when nothing may be kept. */
  get madePlan(): { dir: string; ownBackend: boolean; planFile: string; planSha256: string } | null {
    return this.made;
  }

  /**
   * Runs the job in `workspace`. `kept`: the workspace is the one this agent kept from the job's
   * own plan (issue 31): its source, `.terraform`, lock file and plan file are there, so neither
   * the configuration nor the plan is downloaded and the engine is not initialized again.
   */
  async execute(workspace: Workspace, kept: KeptPlan | null = null): Promise<JsonObject> {
    const { job } = this.deps.claimed;
    const snapshot = job.config_snapshot;
    if (job.job_type === 'DESTROY_WORKER') return this.destroyWorker(workspace);
    if (!snapshot.source || job.vine_id === null) throw new JobFailure('the job has no configuration to run');
    const { dir, env } = await this.prepare(
      workspace,
      snapshot.source,
      snapshot.variables,
      this.deps.claimed.cloud_identity,
      this.deps.claimed.configuration_version ?? null,
      kept?.dir ?? null,
    );
    let engineEnv = env;
    // A speculative plan (a pull request's, a drift check) only reads the state: the control
    // plane refuses its locks and writes, so it plans without taking the lock.
    const readOnlyState = this.deps.claimed.state_access === 'read';
    // A remote run's configuration (issue 27) names this control plane in its `cloud {}` block:
    // its state is the vine's, through the agent's backend in an override file.
    const uploaded = snapshot.source.type === 'upload';
    // A kept workspace holds the agent's own backend file already: what the plan found stands.
    this.ownBackend = kept ? kept.ownBackend : !uploaded && declaresBackend(dir);
    if (this.ownBackend) {
      // Its own backend, maybe an `http` one elsewhere: the worker's credentials stay out of it.
      this.deps.log.system('the configuration declares its own backend; its state stays there');
    } else {
      writeBackendFile(dir, stateAddress(this.deps.settings.serverUrl, job.vine_id), { override: uploaded });
      // The job's own state token, valid for this vine while the job runs; a server too old to
      // issue one gets the worker token, as before.
      const stateToken = this.deps.claimed.state_token ?? null;
      if (stateToken) this.deps.secrets.add(stateToken);
      if (stateToken && !readOnlyState) this.controlPlaneState = { dir, vineId: job.vine_id, stateToken };
      engineEnv = withStateCredentials(env, {
        username: this.deps.settings.workerId,
        password: stateToken ?? this.deps.settings.workerToken,
      });
      const locking = readOnlyState ? 'read only: a speculative plan, not locked' : 'locked while the engine runs';
      this.deps.log.system(
        `state: the Trellis control plane (http backend, ${locking}; ${stateToken ? "the job's own state token" : 'the worker token: this server issues no job state token'})`,
      );
    }
    engineEnv = this.withRegistry(workspace, engineEnv);
    const engine = this.startEngine(dir, engineEnv, snapshot.engine?.name ?? null);
    if (kept) {
      this.deps.log.system(
        `init: skipped: the plan's working directory is kept on this agent with its .terraform and lock file`,
      );
    } else {
      await engine.init();
    }
    const installed = installedModulesMetadata(dir, engineEnv, this.deps.log);
    switch (job.job_type) {
      case 'PLAN': {
        const policies = this.deps.claimed.policies ?? [];
        const opaBin = policies.length > 0 ? this.requireOpa(policies.length) : null;
        // A destroy plan (issue 23) plans the destruction; a DESTROY applies it once approved.
        const destroyPlan = snapshot.destroy === true;
        if (destroyPlan) this.deps.log.system('plan: a destroy plan (nothing is destroyed until a DESTROY applies it)');
        // Run options (issue 27): -target, -replace, -refresh-only, -refresh=false; its DEPLOY applies this plan.
        const options = runOptionArgs(snapshot.run_options);
        if (options.length > 0) this.deps.log.system(`plan: run options ${options.join(' ')}`);
        const flags = [...(readOnlyState ? ['-lock=false'] : []), ...(destroyPlan ? ['-destroy'] : []), ...options];
        await engine.plan(PLAN_FILE, flags);
        const planJson = await engine.showPlanJson(PLAN_FILE);
        const metadata: JsonObject = {
          plan_summary: this.summarizeJson(planJson),
          ...(resourceChanges(planJson) as unknown as JsonObject),
          ...installed,
        };
        if (opaBin !== null) {
          metadata.policy_results = (await this.checkPolicies(opaBin, planJson, workspace)) as unknown as JsonObject[];
        }
        const planSha256 = await this.uploadPlan(dir);
        await this.uploadPlanChanges(planJson);
        // A plan a DEPLOY may apply as it is (not speculative, not a destroy plan) may be kept for it.
        if (!readOnlyState && !destroyPlan && planSha256 !== null) {
          this.made = { dir, ownBackend: this.ownBackend, planFile: `${dir}/${PLAN_FILE}`, planSha256 };
        }
        return metadata;
      }
      case 'DEPLOY': {
        let metadata: JsonObject = { ...installed };
        if (kept) {
          this.deps.log.system(
            `plan of job ${kept.planJobId}: the file this agent made and kept, sha256 ${kept.planSha256} checked (no download)`,
          );
        } else if (job.plan_job_id !== null) {
          await this.downloadPlan(job.plan_job_id, `${dir}/${PLAN_FILE}`);
        } else {
          await engine.plan(PLAN_FILE);
          metadata = { ...metadata, plan_summary: await this.summarize(engine) };
        }
        await engine.apply(PLAN_FILE);
        return { ...metadata, ...(await this.outputs(engine)) };
      }
      case 'DESTROY':
        return this.destroy(engine, dir, workspace);
      default:
        throw new JobFailure(`this agent does not know the job type ${String(job.job_type)}`);
    }
  }

  /**
   * The owner's registry (issue 28): the engine's CLI configuration, a 0600 file in the workspace
   * (removed with it), with the job's registry token for this control plane and, when the owner's
   * mirror holds providers, their installation from it. A server too old to say leaves the engine
   * on the host's own configuration.
   */
  private withRegistry(workspace: Workspace, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
    const registry = this.deps.claimed.registry;
    if (!registry) return env;
    this.deps.secrets.add(registry.token);
    const config = jobCliConfig(
      this.deps.settings.serverUrl,
      registry,
      this.deps.settings.providerMirror ?? 'auto',
      hostCliConfig(env.TF_CLI_CONFIG_FILE),
    );
    this.deps.log.system(
      config.mirrorUrl
        ? `providers: ${registry.mirror_providers.join(', ')} from the provider mirror ${config.mirrorUrl}; registry: the job's own token`
        : `registry: the job's own token for the control plane (no provider mirror: ${config.skipped})`,
    );
    return withCliConfig(env, workspace.path('tofu.tfrc'), config);
  }

  /**
   * DESTROY (issue 23): an approved destroy plan is applied as it is. Without one, the vine's
   * policies are evaluated on the destroy plan first, and a failed mandatory policy stops the
   * destroy before anything is destroyed (the job fails, reporting the results). No policy: the
   * engine destroys as before.
   */
  private async destroy(engine: Engine, dir: string, workspace: Workspace): Promise<JsonObject> {
    const { job, policies = [] } = this.deps.claimed;
    if (job.plan_job_id !== null) {
      await this.downloadPlan(job.plan_job_id, `${dir}/${PLAN_FILE}`);
      this.deps.log.system(`destroy: applying the destroy plan of job ${job.plan_job_id}`);
      await engine.apply(PLAN_FILE);
      return {};
    }
    if (policies.length === 0) {
      await engine.destroy();
      return {};
    }
    const opaBin = this.requireOpa(policies.length);
    await engine.plan(PLAN_FILE, ['-destroy']);
    const planJson = await engine.showPlanJson(PLAN_FILE);
    const results = await this.checkPolicies(opaBin, planJson, workspace);
    const metadata: JsonObject = {
      plan_summary: this.summarizeJson(planJson),
      policy_results: results as unknown as JsonObject[],
    };
    const failed = results.filter((result) => result.enforcement === 'mandatory' && !result.passed);
    if (failed.length > 0) {
      throw new JobFailure(
        `the destroy plan failed ${failed.length === 1 ? 'a mandatory policy' : `${failed.length} mandatory policies`} (${failed
          .map((result) => `${result.name}: ${result.messages.join('; ') || 'denied'}`)
          .join(' | ')}); nothing was destroyed`,
        metadata,
      );
    }
    await engine.apply(PLAN_FILE);
    return metadata;
  }

  /** DESTROY_WORKER: destroy the configuration the target worker's `metadata.deploy` describes. */
  private async destroyWorker(workspace: Workspace): Promise<JsonObject> {
    const { job } = this.deps.claimed;
    const targetId = job.target_worker_id ?? job.config_snapshot.target_worker?.id;
    if (!targetId) throw new JobFailure('the DESTROY_WORKER job names no target worker');
    const target = await this.retrying(() => this.deps.client.getWorkerForAgent(targetId));
    const deploy = parseDeployMetadata(targetId, target.metadata);
    if (!deploy) {
      if (target.mode === 'cloud') {
        throw new JobFailure(
          `cloud worker ${target.name} (${targetId}) has no deploy metadata (metadata.deploy): nothing says what to destroy`,
        );
      }
      this.deps.log.system(`worker ${target.name} is ${target.mode} with no deploy metadata: nothing to destroy`);
      return { target_worker_id: targetId, destroyed: false };
    }
    this.deps.log.system(`destroying the infrastructure of worker ${target.name} (${targetId})`);
    const { dir, env } = await this.prepare(workspace, deploy.source, deploy.variables, deploy.cloudIdentity);
    if (!declaresBackend(dir)) {
      throw new JobFailure(
        `the deploy configuration of worker ${target.name} declares no backend, so its state cannot be found; refusing to destroy`,
      );
    }
    const engine = this.startEngine(dir, env, deploy.engine);
    await engine.init(Object.entries(deploy.backendConfig).map(([key, value]) => `-backend-config=${key}=${value}`));
    await engine.destroy();
    return { target_worker_id: targetId, destroyed: true };
  }

  /** The source in the returned directory, and the engine's environment (variables, cloud credentials). */
  private async prepare(
    workspace: Workspace,
    source: VineSource | UploadedSource,
    variables: Variables,
    identity: CloudIdentityRef | CloudIdentitySettings | null,
    version: ConfigurationVersionClaim | null = null,
    keptDir: string | null = null,
  ): Promise<{ dir: string; env: NodeJS.ProcessEnv }> {
    const { log, secrets, settings } = this.deps;
    for (const variable of Object.values(variables)) if (variable.sensitive) secrets.add(variable.value);
    const hostEnv = settings.hostEnv ?? process.env;
    if (keptDir === null && source.type === 'upload' && !version) {
      throw new JobFailure('the job runs an uploaded configuration but its claim names no configuration version');
    }
    if (keptDir !== null)
      log.system("source: the plan's own, kept on this agent with the same configuration hash (no download)");
    const dir =
      keptDir ??
      (version
        ? await this.unpackVersion(workspace, source, version)
        : await this.fetchSource(workspace, source as VineSource, hostEnv));
    this.checkpoint();
    this.varFiles = writeVariablesFiles(workspace.root, dir, variables);
    let env = engineEnvironment(hostEnv);
    if (identity?.kind === 'oidc') {
      const token = this.deps.claimed.identity_token ?? null;
      if (!token) {
        throw new JobFailure('the vine uses an OIDC cloud identity but the control plane issued no identity token');
      }
      secrets.add(token);
      env = withOidcCredentials(
        env,
        identity,
        token,
        { tokenFile: workspace.path('identity-token'), gcpCredentialsFile: workspace.path('gcp-credentials.json') },
        this.deps.claimed.job.id,
      );
      log.system(
        `cloud identity: ${identity.provider} OIDC federation with the job's identity token (a 0600 file in the workspace)`,
      );
    } else if (identity) {
      log.system(`assuming ${identity.role_arn} with STS`);
      const credentials = await this.deps.assumeRole(identity, this.deps.claimed.job.id);
      secrets.add(credentials.accessKeyId);
      secrets.add(credentials.secretAccessKey);
      secrets.add(credentials.sessionToken);
      env = withAwsCredentials(env, credentials);
      log.system(`assumed ${identity.role_arn}; the engine gets the session's credentials`);
      this.checkpoint();
    }
    return { dir, env };
  }

  private startEngine(dir: string, env: NodeJS.ProcessEnv, engineName: EngineName | null): Engine {
    const { log, settings } = this.deps;
    const bin = resolveEngineBin(settings.engineBin, engineName ?? undefined);
    const cache = withPluginCache(env, settings.pluginCacheDir ?? null, bin, {
      concurrency: settings.concurrency ?? 1,
      hostCliConfig: hostCliConfig((settings.hostEnv ?? process.env).TF_CLI_CONFIG_FILE),
    });
    log.system(cache.note);
    const engine = new Engine({
      bin,
      cwd: dir,
      env: cache.env,
      log,
      graceMs: settings.graceMs,
      lockTimeoutS: settings.lockTimeoutS,
      varFiles: this.varFiles,
      beforeCommand: (command) => this.beforeCommand(command),
    });
    this.engine = engine;
    if (this.interrupted) engine.interrupt();
    return engine;
  }

  /**
   * The configuration version the claim names (issue 23; an upload's, issue 27): downloaded from the control plane with
   * the agent's credentials, checked against the claim's sha256, unpacked; the source's `path` in it.
   */
  private async unpackVersion(
    workspace: Workspace,
    source: VineSource | UploadedSource,
    version: ConfigurationVersionClaim,
  ): Promise<string> {
    const { log, client } = this.deps;
    const dir = workspace.path('src');
    const file = workspace.path('configuration.tar.gz');
    await this.retrying(() =>
      downloadConfigurationVersion(version, (url) => client.downloadConfigurationVersion(url), file),
    );
    await unpackConfigurationVersion(file, dir, version.strip_components);
    const commit = source.type === 'git' && source.commit ? `, commit ${source.commit}` : '';
    // An upload (issue 27) runs in the workspace's working directory inside it.
    const path = (source.type === 'git' || source.type === 'upload') && source.path ? source.path : null;
    log.system(
      `source: configuration version ${version.id}${commit} (${version.size} bytes, sha256 ${version.sha256} checked)${path ? `, path ${path}` : ''}`,
    );
    return path ? safeJoin(dir, path, 'path') : dir;
  }

  /** The source in the workspace: inline files, or a git clone with the host's own credentials. */
  private async fetchSource(workspace: Workspace, source: VineSource, hostEnv: NodeJS.ProcessEnv): Promise<string> {
    const { log, secrets, settings } = this.deps;
    const dir = workspace.path('src');
    if (source.type === 'inline') {
      writeInlineFiles(dir, source.files);
      log.system(`source: ${Object.keys(source.files).length} inline file(s)`);
      return dir;
    }
    try {
      const url = new URL(source.url);
      secrets.add(decodeURIComponent(url.password));
      if (url.password) secrets.add(decodeURIComponent(url.username));
    } catch {
      // scp-like git address (git@host:path): no credentials in it
    }
    log.system(
      `source: git ${displayUrl(source.url)}${source.ref ? ` at ${source.ref}` : ''}${source.commit ? `, commit ${source.commit}` : ''}${source.path ? `, path ${source.path}` : ''}`,
    );
    const options = { allowFile: settings.allowFileSources === true };
    return cloneGitSource(
      source,
      dir,
      hostGit(hostEnv, options, (line) => log.system(`git: ${line}`)),
      options,
    );
  }

  private async summarize(engine: Engine) {
    return this.summarizeJson(await engine.showPlanJson(PLAN_FILE));
  }

  /**
   * The OPA binary that evaluates the policies of this plan. Policies that apply while this agent
   * has none fail the job: a plan is never passed unchecked.
   */
  private requireOpa(count: number): string {
    const bin = resolveOpaBin(this.deps.settings.opaBin);
    if (bin === null) {
      throw new JobFailure(
        `${count} ${count === 1 ? 'policy applies' : 'policies apply'} to this vine but this agent has no OPA engine: install opa on its PATH or set TRELLIS_OPA_BIN / --opa-bin`,
      );
    }
    return bin;
  }

  /** Evaluates the claim's policies on the plan's JSON with OPA and logs each result. */
  private async checkPolicies(bin: string, plan: unknown, workspace: Workspace): Promise<PolicyResult[]> {
    const { claimed, log } = this.deps;
    const { job } = claimed;
    const policies = claimed.policies ?? [];
    log.system(`policies: evaluating ${policies.length} with ${bin.split('/').pop() ?? bin} on the plan`);
    const vine = job.config_snapshot.vine;
    let results: PolicyResult[];
    try {
      results = await evaluatePolicies({
        bin,
        dir: workspace.path('policies'),
        plan,
        trellis: {
          vine: vine ? { id: vine.id, name: vine.name, project_name: vine.project_name } : null,
          vineyard: claimed.vineyard ?? (job.vineyard_id ? { id: job.vineyard_id, name: null } : null),
          job: { id: job.id, job_type: job.job_type, trigger: job.trigger as unknown as JsonObject },
        },
        policies,
      });
    } catch (error) {
      throw new JobFailure(`the policies could not be evaluated: ${(error as Error).message}`);
    }
    const blocked = job.job_type === 'DESTROY' ? 'the destroy stops: nothing is destroyed' : undefined;
    for (const line of summarizePolicyResults(results, blocked)) log.system(line);
    return results;
  }

  private summarizeJson(plan: unknown) {
    const summary = summarizePlan(plan);
    this.deps.log.system(`plan: ${summary.add} to add, ${summary.change} to change, ${summary.destroy} to destroy`);
    return { ...summary };
  }

  /** Uploads the plan file; its sha256 when the control plane stored exactly these bytes, else null. */
  private async uploadPlan(dir: string): Promise<string | null> {
    const bytes = readFileSync(`${dir}/${PLAN_FILE}`);
    if (bytes.length > MAX_PLAN_BYTES) {
      throw new JobFailure(`the plan file is ${bytes.length} bytes, over the 50 MiB limit of the control plane`);
    }
    const { job } = this.deps.claimed;
    const stored = await this.retrying(() =>
      this.deps.client.uploadPlanArtifact(job.id, new Uint8Array(bytes), bytes.length),
    ).catch((error: unknown) => {
      // A full store stays full until someone frees space: no retry, a failure that says so.
      if (error instanceof TrellisApiError && error.status === 507) {
        throw new JobFailure(
          `the control plane's artifact storage is full: the plan (${bytes.length} bytes) was not stored (507 ${error.code}: ${error.detail}); nothing stored before is lost; once space is freed, plan again`,
        );
      }
      throw error;
    });
    this.deps.log.system(`plan uploaded: ${stored.size} bytes, sha256 ${stored.sha256}`);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    return sha256 === stored.sha256 ? sha256 : null;
  }

  /**
   * The plan's change document (issue 29), masked here so no sensitive value leaves the agent,
   * uploaded after the plan file and authorized like it: only this worker, while the PLAN runs.
   * It is an object beside the plan file rather than a job result, because at up to 1 MiB it would
   * swell every job list that carries `execution_metadata`. A control plane older than change
   * documents (`404 route_not_found`), or one that refuses the document (`400`, `413`), keeps the
   * plan without one; any other failure fails the job as a failed plan upload does.
   */
  private async uploadPlanChanges(planJson: unknown): Promise<void> {
    const { secrets } = this.deps;
    const document = planChangeDocument(planJson, { isSecret: (text) => secrets.redact(text) !== text });
    const { job } = this.deps.claimed;
    try {
      const stored = await this.retrying(() => this.deps.client.uploadPlanChanges(job.id, document));
      const omitted = document.resource_changes_omitted + document.output_changes_omitted;
      this.deps.log.system(
        `plan changes uploaded: ${document.resource_changes.length} resource(s), ${document.output_changes.length} output(s)${omitted > 0 ? `, ${omitted} more left out (over the size limit)` : ''}, sensitive values masked (${stored.size} bytes)`,
      );
    } catch (error) {
      if (error instanceof TrellisApiError && error.status === 404 && error.code === 'route_not_found') {
        this.deps.log.system('plan changes: this control plane keeps no change documents; the plan has none');
        return;
      }
      // A document the control plane refuses (an older one that does not know a newer format)
      // costs the review its diff, not the plan: the plan file is stored and can be deployed.
      if (error instanceof TrellisApiError && (error.status === 400 || error.status === 413)) {
        this.deps.log.system(
          `plan changes: the control plane refused the change document (${error.status} ${error.code}: ${error.detail}); the plan has none`,
        );
        this.deps.logger.warn('the control plane refused the plan change document', {
          status: error.status,
          code: error.code,
        });
        return;
      }
      throw error;
    }
  }

  /** Downloads the plan of `planJobId` and checks its size and sha256 against what the server stored. */
  private async downloadPlan(planJobId: string, target: string): Promise<void> {
    await this.retrying(async () => {
      const artifact = await this.deps.client.downloadPlanArtifact(planJobId);
      const { size, sha256 } = await saveMeasured(artifact.body, target);
      if (sha256 !== artifact.sha256 || (Number.isFinite(artifact.size) && size !== artifact.size)) {
        throw new JobFailure(
          `the plan of job ${planJobId} is damaged: got ${size} bytes with sha256 ${sha256}, expected ${artifact.size} bytes with sha256 ${artifact.sha256}`,
        );
      }
      this.deps.log.system(`plan of job ${planJobId} downloaded: ${size} bytes, sha256 ${sha256} checked`);
    });
  }

  private async outputs(engine: Engine): Promise<JsonObject> {
    const report = outputsMetadata(await engine.outputsJson());
    for (const note of report.notes) this.deps.log.system(note);
    const names = Object.keys((report.metadata.outputs ?? {}) as JsonObject);
    this.deps.log.system(
      `outputs: ${names.length} reported${report.sensitive.length > 0 ? `, ${report.sensitive.length} sensitive kept on this machine (${report.sensitive.join(', ')})` : ''}`,
    );
    return report.metadata;
  }

  private checkpoint(): void {
    if (this.interrupted) throw new JobInterrupted('interrupted');
  }

  /** A call to the control plane, retried while it is unreachable (a few minutes at most). */
  private async retrying<T>(call: () => Promise<T>): Promise<T> {
    return retry(
      () => {
        this.checkpoint();
        return call();
      },
      {
        clock: this.deps.clock ?? systemClock,
        timeoutMs: 5 * 60_000,
        onRetry: (error, delay) =>
          this.deps.logger.warn('control plane call failed; retrying', {
            error: (error as Error).message,
            retry_in_ms: delay,
          }),
      },
    );
  }
}
