import type { Readable } from 'node:stream';
import { ValidationError } from '../domain/errors.js';
import type { Json } from '../domain/records.js';

/** An output of a state version: its value, its type as the engine wrote it, whether it is sensitive. */
export interface StateOutput {
  name: string;
  value: Json;
  /** The cty type in JSON form (the protocol's `detailed-type`). */
  detailedType: Json;
  sensitive: boolean;
}

/** What a state file holds that the protocol reads: its outputs and how many resources it manages. */
export interface StateSummary {
  outputs: StateOutput[];
  resources: number;
  terraformVersion: string | null;
}

export async function readAll(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

/** Reads a state file's outputs and resources (state format version 4). */
export function summarizeState(bytes: Buffer): StateSummary {
  let state: unknown;
  try {
    state = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new ValidationError('the state is not JSON', [], 'invalid_state_file');
  }
  const record = (state ?? {}) as { outputs?: unknown; resources?: unknown; terraform_version?: unknown };
  const outputs: StateOutput[] = [];
  if (record.outputs && typeof record.outputs === 'object') {
    for (const [name, raw] of Object.entries(record.outputs as Record<string, unknown>)) {
      const output = (raw ?? {}) as { value?: Json; type?: Json; sensitive?: unknown };
      outputs.push({
        name,
        value: output.value ?? null,
        detailedType: output.type ?? 'dynamic',
        sensitive: output.sensitive === true,
      });
    }
  }
  outputs.sort((a, b) => a.name.localeCompare(b.name));
  return {
    outputs,
    resources: Array.isArray(record.resources) ? record.resources.length : 0,
    terraformVersion: typeof record.terraform_version === 'string' ? record.terraform_version : null,
  };
}

/** The protocol's coarse `type` of an output, from its detailed type. */
export function outputKind(detailedType: Json): string {
  const head = Array.isArray(detailedType) ? detailedType[0] : detailedType;
  switch (head) {
    case 'string':
      return 'string';
    case 'number':
      return 'number';
    case 'bool':
      return 'boolean';
    case 'list':
    case 'tuple':
    case 'set':
      return 'array';
    case 'map':
    case 'object':
      return 'object';
    default:
      return 'string';
  }
}

/** A state file with another serial: what a rollback writes (the old bytes as the newest version). */
export function withSerial(bytes: Buffer, serial: number): Buffer {
  const state = JSON.parse(bytes.toString('utf8')) as Record<string, Json>;
  state.serial = serial;
  return Buffer.from(`${JSON.stringify(state, null, 2)}\n`, 'utf8');
}

/** A resource of a state file as people read it: where it is and what manages it, never its attributes. */
export interface StateResource {
  /** `module.net.aws_subnet.a`; `data.` before a data source's type. */
  address: string;
  /** The module's address (`module.net`), or `''` for the root module. */
  module: string;
  mode: 'managed' | 'data';
  type: string;
  name: string;
  /** `provider["registry.opentofu.org/hashicorp/aws"]`, as the engine wrote it. */
  provider: string;
  /** How many instances (`count`, `for_each`) it has. */
  instances: number;
}

/** The resources of a state file (format version 4), by module and then address. */
export function stateResources(bytes: Buffer): StateResource[] {
  let state: unknown;
  try {
    state = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new ValidationError('the state is not JSON', [], 'invalid_state_file');
  }
  const raw = (state as { resources?: unknown } | null)?.resources;
  if (!Array.isArray(raw)) return [];
  const resources: StateResource[] = [];
  for (const entry of raw) {
    const resource = (entry ?? {}) as Record<string, unknown>;
    const text = (value: unknown) => (typeof value === 'string' ? value : '');
    const module = text(resource.module);
    const mode = resource.mode === 'data' ? 'data' : 'managed';
    const local = `${mode === 'data' ? 'data.' : ''}${text(resource.type)}.${text(resource.name)}`;
    resources.push({
      address: module ? `${module}.${local}` : local,
      module,
      mode,
      type: text(resource.type),
      name: text(resource.name),
      provider: text(resource.provider),
      instances: Array.isArray(resource.instances) ? resource.instances.length : 0,
    });
  }
  return resources.sort((a, b) => a.module.localeCompare(b.module) || a.address.localeCompare(b.address));
}
