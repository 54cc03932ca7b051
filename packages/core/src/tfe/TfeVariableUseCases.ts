import { createHash } from 'node:crypto';
import type { UserActor } from '../domain/actors.js';
import { ConflictError, NotFoundError, UnprocessableError, ValidationError } from '../domain/errors.js';
import type { VariableValue, Variables, Vine } from '../domain/records.js';
import { recordAudit } from '../usecases/audit.js';
import { type CoreDeps, isoNow } from '../usecases/CoreDeps.js';
import { variableNameOf } from './names.js';
import type { TfeWorkspaceUseCases, WorkspaceRef } from './TfeWorkspaceUseCases.js';

/** A workspace variable as the protocol's attributes carry it. */
export interface TfeVariableInput {
  key?: unknown;
  value?: unknown;
  category?: unknown;
  sensitive?: unknown;
  hcl?: unknown;
  description?: unknown;
}

/** A vine variable as the protocol shows it: a sensitive value is never shown. */
export interface TfeVariable {
  name: string;
  value: string | null;
  sensitive: boolean;
  description: string;
  /** Tells versions of a sensitive value apart without showing it (a digest of it). */
  versionOf: string;
  vine: Vine;
}

const KEY = /^[A-Za-z_][A-Za-z0-9_-]{0,127}$/;

function category(input: TfeVariableInput): void {
  if (input.category !== undefined && input.category !== 'terraform') {
    throw new UnprocessableError(
      'variable_category_unsupported',
      "only terraform variables are kept on a workspace here (environment variables are the agent host's)",
    );
  }
  if (input.hcl === true) {
    throw new UnprocessableError(
      'variable_category_unsupported',
      'HCL variable values are not supported; send a string',
    );
  }
}

/**
 * `/workspaces/:id/vars` ↔ the vine's variables (issue 26): the terraform variables every Trellis
 * job of the vine gets. Listing needs `viewer` (sensitive values stay hidden); changing needs what
 * changing a vine needs (`vineyards.manage`).
 */
export class TfeVariableUseCases {
  constructor(
    private readonly deps: CoreDeps,
    private readonly workspaces: TfeWorkspaceUseCases,
  ) {}

  async list(actor: UserActor, ref: WorkspaceRef): Promise<TfeVariable[]> {
    const { vine } = await this.workspaces.locate(actor, ref, 'read');
    return Object.entries(vine.variables)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, variable]) => view(vine, name, variable));
  }

  async create(actor: UserActor, ref: WorkspaceRef, input: TfeVariableInput): Promise<TfeVariable> {
    category(input);
    const name = typeof input.key === 'string' && KEY.test(input.key) ? input.key : null;
    if (name === null) throw new ValidationError('key is not a variable name', [{ path: 'key', message: 'invalid' }]);
    return this.change(actor, ref, (variables) => {
      if (variables[name]) throw new ConflictError('variable_exists', `the workspace already has a variable ${name}`);
      const description = variableDescription(input.description);
      variables[name] = {
        value: variableValue(input.value),
        sensitive: input.sensitive === true,
        ...(description ? { description } : {}),
      };
      return name;
    });
  }

  async update(actor: UserActor, ref: WorkspaceRef, id: unknown, input: TfeVariableInput): Promise<TfeVariable> {
    category(input);
    const name = variableNameOf(id);
    return this.change(actor, ref, (variables) => {
      const current = name === null ? undefined : variables[name];
      if (name === null || !current) throw new NotFoundError('variable');
      const key = input.key === undefined ? name : input.key;
      if (typeof key !== 'string' || !KEY.test(key)) {
        throw new ValidationError('key is not a variable name', [{ path: 'key', message: 'invalid' }]);
      }
      const description =
        input.description === undefined ? (current.description ?? '') : variableDescription(input.description);
      delete variables[name];
      variables[key] = {
        value: input.value === undefined ? current.value : variableValue(input.value),
        // A sensitive variable stays sensitive.
        sensitive: current.sensitive || input.sensitive === true,
        ...(description ? { description } : {}),
      };
      return key;
    });
  }

  async delete(actor: UserActor, ref: WorkspaceRef, id: unknown): Promise<void> {
    const name = variableNameOf(id);
    await this.change(actor, ref, (variables) => {
      if (name === null || !variables[name]) throw new NotFoundError('variable');
      delete variables[name];
      return null;
    });
  }

  private async change(
    actor: UserActor,
    ref: WorkspaceRef,
    edit: (variables: Variables) => string | null,
  ): Promise<TfeVariable> {
    const { vine, scope } = await this.workspaces.locate(actor, ref, 'vineyards.manage');
    return this.deps.uow.run(scope, async (stores) => {
      const current = await stores.vines.get(vine.owner_id, vine.id);
      if (!current) throw new NotFoundError('workspace');
      const variables: Variables = { ...current.variables };
      const name = edit(variables);
      const updated = await stores.vines.updateSettings(vine.owner_id, vine.id, { variables }, isoNow(this.deps));
      await recordAudit(stores, this.deps, actor, {
        action: 'vine.update',
        target: { type: 'vine', id: vine.id },
        owner_id: vine.owner_id,
        details: { variable: name, via: 'terraform-cloud' },
      });
      const variable = name === null ? undefined : updated.variables[name];
      return variable && name !== null
        ? view(updated, name, variable)
        : { name: '', value: null, sensitive: false, description: '', versionOf: '', vine: updated };
    });
  }
}

function variableValue(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string' || value.length > 64 * 1024) {
    throw new ValidationError('value must be a string', [{ path: 'value', message: 'must be a string' }]);
  }
  return value;
}

/** HCP Terraform's limit, which go-tfe's tests check. */
const MAX_DESCRIPTION = 512;

function variableDescription(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string' || value.length > MAX_DESCRIPTION) {
    throw new ValidationError(`description must be text of at most ${MAX_DESCRIPTION} characters`, [
      { path: 'description', message: `at most ${MAX_DESCRIPTION} characters` },
    ]);
  }
  return value;
}

function view(vine: Vine, name: string, variable: VariableValue): TfeVariable {
  return {
    name,
    value: variable.sensitive ? null : variable.value,
    sensitive: variable.sensitive,
    description: variable.description ?? '',
    versionOf: createHash('sha256').update(variable.value).digest('hex'),
    vine,
  };
}
