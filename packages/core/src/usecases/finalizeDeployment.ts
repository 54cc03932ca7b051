import { type ExecutionMetadata, parseExecutionMetadata } from '../domain/jobResults.js';
import type { Json, JsonObject, VineComponents } from '../domain/records.js';
import type { Stores } from '../ports/UnitOfWork.js';
import type { JobHook } from '../jobs/hooks.js';

/** What a successful DEPLOY's `execution_metadata` gives its vine's components (SPEC §2). */
export interface DeploymentOutputs {
  cluster_name: string | null;
  cluster_endpoint: string | null;
  argocd_url: string | null;
  /** Non-sensitive outputs only. */
  outputs: JsonObject;
  /** The names of the sensitive outputs, whose values are never stored. */
  sensitive: string[];
}

function isObject(value: unknown): value is Record<string, Json> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Reads the outputs of metadata as an agent reported it, judged by the one rule of the results
 * (`parseExecutionMetadata`: a malformed one is a `ValidationError` naming the field).
 */
export function extractDeploymentOutputs(metadata: JsonObject): DeploymentOutputs {
  return deploymentOutputsOf(parseExecutionMetadata(metadata));
}

/**
 * The outputs of stored (typed) metadata. `outputs` may be plain values or OpenTofu's
 * `output -json` shape (`{value, type, sensitive}`); sensitive outputs are dropped so they are
 * never stored in clear.
 */
export function deploymentOutputsOf(metadata: ExecutionMetadata): DeploymentOutputs {
  const outputs: JsonObject = {};
  const sensitive = new Set(metadata.sensitive_outputs ?? []);
  for (const [name, entry] of Object.entries(metadata.outputs ?? {})) {
    if (isObject(entry) && 'value' in entry && 'sensitive' in entry) {
      if (entry.sensitive !== true) outputs[name] = entry.value ?? null;
      else sensitive.add(name);
    } else {
      outputs[name] = entry;
    }
  }
  return {
    cluster_name: metadata.cluster_name ?? null,
    cluster_endpoint: metadata.cluster_endpoint ?? null,
    argocd_url: metadata.argocd_url ?? null,
    outputs,
    sensitive: [...sensitive].filter((name) => !(name in outputs)).sort(),
  };
}

/**
 * The metadata as it may be stored on the job: the value of every sensitive output in
 * `outputs` (OpenTofu's `{value, type, sensitive: true}`) replaced, so it is never kept in clear.
 */
export function redactSensitiveOutputs<T extends JsonObject>(metadata: T): T {
  const raw = metadata.outputs;
  if (!isObject(raw)) return metadata;
  const outputs: JsonObject = {};
  for (const [name, entry] of Object.entries(raw)) {
    outputs[name] =
      isObject(entry) && 'value' in entry && entry.sensitive === true ? { ...entry, value: '***' } : entry;
  }
  return { ...metadata, outputs };
}

/**
 * SPEC §3: after a successful DEPLOY the vine's components take the job's outputs. Runs inside
 * the unit of work that marks the job `SUCCESS`, so both commit together or neither does.
 */
export async function finalizeDeployment(
  stores: Stores,
  job: { id: string; owner_id: string; vine_id: string },
  outputs: DeploymentOutputs,
  at: string,
): Promise<void> {
  const components: VineComponents = {
    cluster:
      outputs.cluster_name !== null || outputs.cluster_endpoint !== null
        ? { name: outputs.cluster_name, endpoint: outputs.cluster_endpoint, job_id: job.id }
        : null,
    argocd: outputs.argocd_url !== null ? { url: outputs.argocd_url, job_id: job.id } : null,
    outputs: { values: outputs.outputs, sensitive: outputs.sensitive, job_id: job.id },
  };
  await stores.vines.saveComponents(job.owner_id, job.vine_id, components, at);
}

/**
 * A successful DEPLOY's outputs become its vine's components; a successful DESTROY clears them
 * (DESIGN §3) and the vine's last drift check (nothing is left to drift), in the unit of work of
 * the job's end.
 */
export const deploymentHooks: readonly JobHook[] = [
  {
    name: 'deployments.finalize',
    on: ['reported'],
    async run(job, change, { stores }) {
      if (job.status !== 'SUCCESS' || job.job_type !== 'DEPLOY' || job.vine_id === null) return;
      const outputs = deploymentOutputsOf(job.execution_metadata);
      await finalizeDeployment(stores, { ...job, vine_id: job.vine_id }, outputs, change.at);
    },
  },
  {
    name: 'deployments.clearComponents',
    on: ['reported'],
    async run(job, _change, { stores }) {
      if (job.status !== 'SUCCESS' || job.job_type !== 'DESTROY' || job.vine_id === null) return;
      await stores.vines.clearComponents(job.owner_id, job.vine_id);
      await stores.vines.recordDrift(job.owner_id, job.vine_id, null);
    },
  },
];
