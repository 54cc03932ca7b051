import { createHash } from 'node:crypto';
import {
  configurationVersionId,
  outputId,
  outputKind,
  projectId,
  type StateOutput,
  stateVersionId,
  type TfeStateVersion,
  type TfeVariable,
  type TfeWorkspace,
  type Vineyard,
  variableId,
  workspaceId,
  workspaceSettingAttributes,
} from '@trellis/core';
import { linkage, type Resource, resource } from './jsonapi.js';

/** What the caller may do in an owner's records, as workspace and organization `permissions` say it. */
export interface Abilities {
  manage: boolean;
  useState: boolean;
  forceUnlock: boolean;
  /** Queue plans and applies (remote runs, issue 27): `jobs.run`. */
  run: boolean;
}

/** The entitlements of every organization: state, login and remote operations (issue 27). */
export function entitlementSet(organization: string): Resource {
  return resource('entitlement-sets', organization, {
    operations: true,
    'state-storage': true,
    'private-module-registry': false,
    'private-policy-agents': false,
    sentinel: false,
    'cost-estimation': false,
    teams: false,
    'vcs-integrations': false,
    agents: false,
    'audit-logging': true,
    sso: false,
    'run-tasks': false,
    'global-run-tasks': false,
    'configuration-designer': false,
    'module-tests-generation': false,
    'self-serve-billing': false,
    'user-limit': null,
  });
}

export function organization(name: string, createdAt: string | null, abilities: Abilities): Resource {
  return resource('organizations', name, {
    name,
    'created-at': createdAt,
    email: '',
    'external-id': name,
    'default-execution-mode': 'remote',
    permissions: {
      'can-update': abilities.manage,
      'can-destroy': false,
      'can-create-workspace': abilities.manage,
      'can-create-project': abilities.manage,
      'can-manage-tags': abilities.manage,
    },
  });
}

export function workspace(ws: TfeWorkspace, abilities: Abilities): Resource {
  const { vine } = ws;
  const lockedBy = ws.lock ? protocolLockHolder(ws.lock) : null;
  return resource(
    'workspaces',
    workspaceId(vine.id),
    {
      ...workspaceSettingAttributes(vine.workspace_settings),
      name: vine.name,
      environment: 'default',
      'execution-mode': vine.execution_mode,
      // The older form of the execution mode: a `local` workspace runs on the CLI's machine.
      operations: vine.execution_mode === 'remote',
      'terraform-version': vine.terraform_version,
      locked: ws.lock !== null,
      'tag-names': vine.tags,
      // Set on the workspace itself, never inherited from an organization default.
      'setting-overwrites': { 'execution-mode': true, 'agent-pool': true },
      'resource-count': 0,
      source: 'tfe-api',
      'created-at': vine.created_at,
      'updated-at': vine.updated_at,
      actions: { 'is-destroyable': abilities.manage },
      permissions: {
        'can-update': abilities.manage,
        'can-destroy': abilities.manage,
        'can-force-delete': abilities.manage,
        'can-queue-run': abilities.run,
        'can-queue-apply': abilities.run,
        'can-queue-destroy': abilities.run,
        'can-read-settings': true,
        'can-lock': abilities.useState,
        'can-unlock': abilities.useState,
        'can-force-unlock': abilities.forceUnlock,
        'can-read-state-versions': abilities.useState,
        'can-create-state-versions': abilities.useState,
        'can-read-variable': true,
        'can-update-variable': abilities.manage,
        'can-manage-tags': abilities.manage,
      },
    },
    {
      organization: linkage('organizations', ws.organization),
      project: linkage('projects', projectId(vine.vineyard_id)),
      'current-state-version': ws.current ? linkage('state-versions', stateVersionId(ws.current.id)) : null,
      'current-configuration-version': ws.currentConfigurationVersionId
        ? linkage('configuration-versions', configurationVersionId(ws.currentConfigurationVersionId))
        : null,
      // Only a lock taken through the protocol names its holder; an engine's lock shows `locked` alone.
      'locked-by': lockedBy ? linkage('users', lockedBy) : null,
      vars: Object.keys(vine.variables)
        .sort()
        .map((name) => linkage('vars', variableId(name))),
    },
    {
      self: `/api/v2/organizations/${ws.organization}/workspaces/${vine.name}`,
      'self-html': `/app/${ws.organization}/workspaces/${vine.name}`,
    },
  );
}

/** The person holding a lock taken through the protocol (`TfeLockUseCases`), else null. */
function protocolLockHolder(lock: NonNullable<TfeWorkspace['lock']>): string | null {
  const holder = lock.info.TrellisUserId;
  return lock.info.Operation === 'TerraformCloudLock' && typeof holder === 'string' ? holder : null;
}

export function project(vineyard: Vineyard, organizationName: string): Resource {
  return resource(
    'projects',
    projectId(vineyard.id),
    { name: vineyard.name, description: '', 'created-at': vineyard.created_at },
    { organization: linkage('organizations', organizationName) },
  );
}

/** A version; its URLs only for those who may read the whole state (`operator`). */
export function stateVersion(
  view: TfeStateVersion,
  urls: { download: string | null },
  outputs: StateOutput[] | null = null,
): Resource {
  const { version } = view;
  return resource(
    'state-versions',
    stateVersionId(version.id),
    {
      'created-at': version.created_at,
      serial: version.serial,
      status: 'finalized',
      size: version.size,
      'hosted-state-download-url': urls.download,
      'hosted-json-state-download-url': null,
      'hosted-state-upload-url': null,
      'hosted-json-state-upload-url': null,
      'resources-processed': true,
      'state-version': 4,
      'terraform-version': '',
      'vcs-commit-sha': null,
      'vcs-commit-url': null,
    },
    {
      workspace: linkage('workspaces', workspaceId(view.vine.id)),
      outputs: (outputs ?? []).map((output) => linkage('state-version-outputs', outputId(version.id, output.name))),
    },
  );
}

/** A version created ahead of its bytes: where to PUT them. */
export function pendingStateVersion(
  uploadId: string,
  vineId: string,
  urls: { upload: string; jsonUpload: string },
): Resource {
  return resource(
    'state-versions',
    `sv-${uploadId}`,
    {
      status: 'pending',
      'hosted-state-upload-url': urls.upload,
      'hosted-json-state-upload-url': urls.jsonUpload,
      'hosted-state-download-url': null,
      'hosted-json-state-download-url': null,
      'resources-processed': false,
    },
    { workspace: linkage('workspaces', workspaceId(vineId)) },
  );
}

export function stateOutput(versionId: number, output: StateOutput): Resource {
  return resource('state-version-outputs', outputId(versionId, output.name), {
    name: output.name,
    sensitive: output.sensitive,
    type: outputKind(output.detailedType),
    value: output.value,
    'detailed-type': output.detailedType,
  });
}

/** A current output as a workspace's `outputs` carry it (a sensitive value is never shown there). */
export function workspaceOutput(versionId: number, output: StateOutput): Resource {
  return resource('workspace-outputs', outputId(versionId, output.name), {
    name: output.name,
    sensitive: output.sensitive,
    'output-type': outputKind(output.detailedType),
    value: output.sensitive ? null : output.value,
  });
}

export function variable(view: TfeVariable): Resource {
  return resource(
    'vars',
    variableId(view.name),
    {
      key: view.name,
      value: view.value,
      sensitive: view.sensitive,
      category: 'terraform',
      hcl: false,
      description: view.description,
      // Changes whenever the variable does (HCP Terraform's is opaque too).
      'version-id': createHash('sha256')
        .update(`${view.name}\0${view.sensitive}\0${view.value ?? view.versionOf}\0${view.description}`)
        .digest('hex')
        .slice(0, 32),
    },
    { configurable: linkage('workspaces', workspaceId(view.vine.id)) },
  );
}

export function account(details: { id: string; email: string; name: string; username: string }): Resource {
  return resource('users', details.id, {
    username: details.username,
    email: details.email,
    'is-service-account': false,
    'two-factor': { enabled: false, verified: false },
    permissions: { 'can-create-organizations': false, 'can-change-email': false, 'can-change-username': false },
  });
}
