import type { EngineName, Json, VariableValue, VineSource } from '@trellis/core';
import type { CloudIdentityRef } from '../cloud/assumeRole.js';
import { JobFailure } from './errors.js';

/**
 * What a cloud worker's `metadata.deploy` says about the infrastructure that runs it, written by
 * the infrastructure-as-code run that deployed it (`POST /api/tendrils/register` or
 * `POST /api/workers/{id}/metadata`). A `DESTROY_WORKER` job destroys exactly this configuration:
 *
 * ```json
 * { "deploy": {
 *     "source": { "type": "git", "url": "...", "ref": "v3", "path": "agent" },
 *     "variables": { "region": "eu-west-1", "token": { "value": "...", "sensitive": true } },
 *     "engine": { "name": "tofu" },
 *     "backend_config": { "bucket": "acme-tofu-state", "key": "agents/eu-1.tfstate" },
 *     "cloud_identity": { "provider": "aws", "role_arn": "arn:aws:iam::...", "external_id": "..." } } }
 * ```
 *
 * The configuration must declare its own backend (the state of a worker's infrastructure is not a
 * vine's); `backend_config` entries become `-backend-config=key=value` flags of `init`.
 */
export interface DeployMetadata {
  source: VineSource;
  variables: Record<string, VariableValue>;
  engine: EngineName | null;
  backendConfig: Record<string, string>;
  cloudIdentity: CloudIdentityRef | null;
}

function isObject(value: unknown): value is Record<string, Json> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function invalid(workerId: string, what: string): JobFailure {
  return new JobFailure(`the deploy metadata of worker ${workerId} is not usable: ${what}`);
}

/** `metadata.deploy` of the target worker, or null when it has none. */
export function parseDeployMetadata(workerId: string, metadata: Record<string, Json>): DeployMetadata | null {
  const deploy = metadata.deploy;
  if (deploy === undefined || deploy === null) return null;
  if (!isObject(deploy)) throw invalid(workerId, 'metadata.deploy must be an object');
  return {
    source: parseSource(workerId, deploy.source),
    variables: parseVariables(workerId, deploy.variables),
    engine: parseEngine(workerId, deploy.engine),
    backendConfig: parseBackendConfig(workerId, deploy.backend_config),
    cloudIdentity: parseIdentity(workerId, deploy.cloud_identity),
  };
}

function parseSource(workerId: string, source: Json | undefined): VineSource {
  if (!isObject(source)) throw invalid(workerId, 'deploy.source is missing');
  if (source.type === 'inline' && isObject(source.files)) {
    const files: Record<string, string> = {};
    for (const [name, content] of Object.entries(source.files)) {
      if (typeof content !== 'string') throw invalid(workerId, `deploy.source.files["${name}"] must be a string`);
      files[name] = content;
    }
    return { type: 'inline', files };
  }
  if (source.type === 'git' && typeof source.url === 'string') {
    return {
      type: 'git',
      url: source.url,
      ref: typeof source.ref === 'string' ? source.ref : null,
      path: typeof source.path === 'string' ? source.path : null,
    };
  }
  throw invalid(workerId, 'deploy.source must be {type:"inline", files} or {type:"git", url, ref?, path?}');
}

function parseVariables(workerId: string, variables: Json | undefined): Record<string, VariableValue> {
  if (variables === undefined || variables === null) return {};
  if (!isObject(variables)) throw invalid(workerId, 'deploy.variables must be an object');
  const parsed: Record<string, VariableValue> = {};
  for (const [name, entry] of Object.entries(variables)) {
    if (typeof entry === 'string') parsed[name] = { value: entry, sensitive: false };
    else if (isObject(entry) && typeof entry.value === 'string') {
      parsed[name] = { value: entry.value, sensitive: entry.sensitive === true };
    } else throw invalid(workerId, `deploy.variables.${name} must be a string or {value, sensitive}`);
  }
  return parsed;
}

function parseEngine(workerId: string, engine: Json | undefined): EngineName | null {
  if (engine === undefined || engine === null) return null;
  const name = isObject(engine) ? engine.name : engine;
  if (name === 'tofu' || name === 'terraform') return name;
  throw invalid(workerId, 'deploy.engine must be "tofu" or "terraform"');
}

function parseBackendConfig(workerId: string, config: Json | undefined): Record<string, string> {
  if (config === undefined || config === null) return {};
  if (!isObject(config)) throw invalid(workerId, 'deploy.backend_config must be an object');
  const parsed: Record<string, string> = {};
  for (const [key, value] of Object.entries(config)) {
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      throw invalid(workerId, `deploy.backend_config.${key} must be a string, number or boolean`);
    }
    parsed[key] = String(value);
  }
  return parsed;
}

function parseIdentity(workerId: string, identity: Json | undefined): CloudIdentityRef | null {
  if (identity === undefined || identity === null) return null;
  if (
    !isObject(identity) ||
    (identity.provider ?? 'aws') !== 'aws' ||
    typeof identity.role_arn !== 'string' ||
    typeof identity.external_id !== 'string'
  ) {
    throw invalid(workerId, 'deploy.cloud_identity must be {provider:"aws", role_arn, external_id}');
  }
  return { provider: 'aws', role_arn: identity.role_arn, external_id: identity.external_id };
}
