import {
  personalNamespace,
  phaseStatusOfJob,
  runApplyId,
  runId,
  runPlanId,
  runPolicyCheckId,
  type TfeRunView,
  tfeConfigurationVersionId,
  workspaceId,
} from '@trellis/core';
import { linkage, type Resource, resource } from '../jsonapi.js';

/**
 * A run (issue 27) as go-tfe reads it: its status mapped from the plan job, its apply and the
 * deploy gate (`runStatus` in core); `actions` and `permissions` from the gate and the caller's
 * role; its plan, apply and policy check named by the plan job's id.
 */
export function run(view: TfeRunView): Resource {
  const { run: record, plan } = view;
  const policies = (plan.claimed_policies ?? []).length > 0;
  // Who said yes: a yes given while the apply waited for an approval, else who queued the apply
  // (nobody for a run that applied itself).
  const confirmedBy = record.confirmed_by ?? (record.auto_apply ? null : (view.apply?.created_by ?? null));
  return resource(
    'runs',
    runId(plan.id),
    {
      status: view.status,
      'status-timestamps': view.timestamps,
      actions: view.actions,
      permissions: view.permissions,
      message: record.message,
      source: 'tfe-api',
      'trigger-reason': 'manual',
      'created-at': plan.created_at,
      'has-changes': view.hasChanges,
      'is-destroy': record.is_destroy,
      'auto-apply': record.auto_apply,
      'plan-only': record.plan_only,
      'save-plan': record.save_plan,
      refresh: record.refresh,
      'refresh-only': record.refresh_only,
      'target-addrs': record.target_addrs.length > 0 ? record.target_addrs : null,
      'replace-addrs': record.replace_addrs.length > 0 ? record.replace_addrs : null,
      // A run's variables may be secrets: their names only.
      variables: record.variable_keys.map((key) => ({ key, value: '***' })),
      'terraform-version': view.vine.terraform_version,
      'allow-empty-apply': false,
      'allow-config-generation': false,
      'position-in-queue': 0,
      'canceled-at': view.timestamps['canceled-at'] ?? null,
      'force-cancel-available-at': null,
    },
    {
      workspace: linkage('workspaces', workspaceId(record.vine_id)),
      'configuration-version': linkage(
        'configuration-versions',
        tfeConfigurationVersionId(record.configuration_version_id),
      ),
      plan: linkage('plans', runPlanId(plan.id)),
      apply: linkage('applies', runApplyId(plan.id)),
      'created-by': linkage('users', record.created_by),
      'confirmed-by': confirmedBy ? linkage('users', confirmedBy) : null,
      'policy-checks': policies ? [linkage('policy-checks', runPolicyCheckId(plan.id))] : [],
      'task-stages': [],
      'cost-estimate': null,
      'run-events': [],
    },
    { self: `/api/v2/runs/${runId(plan.id)}` },
  );
}

/** A plan's status as HCP Terraform names it, from the plan job (the phases' own rule). */
export function planStatus(view: TfeRunView): string {
  return phaseStatusOfJob(view.plan);
}

/** The stub of the run's plan an `include=plan` carries (`plans/:id` serves it whole). */
export function planStub(view: TfeRunView): Resource {
  const summary = view.plan.execution_metadata.plan_summary;
  return resource('plans', runPlanId(view.plan.id), {
    status: planStatus(view),
    'has-changes': view.hasChanges,
    'resource-additions': summary?.add ?? 0,
    'resource-changes': summary?.change ?? 0,
    'resource-destructions': summary?.destroy ?? 0,
    'resource-imports': 0,
    'generated-configuration': false,
  });
}

/** The stub of the run's apply an `include=apply` carries (`applies/:id` serves it whole). */
export function applyStub(view: TfeRunView): Resource {
  const status = (() => {
    switch (view.apply?.status) {
      case undefined:
        return view.status === 'discarded' || view.status === 'canceled' || view.status === 'errored'
          ? 'unreachable'
          : 'pending';
      case 'QUEUED':
        return 'queued';
      case 'PROCESSING':
        return 'running';
      case 'SUCCESS':
        return 'finished';
      case 'FAILED':
        return 'errored';
      case 'CANCELLED':
        return 'canceled';
    }
  })();
  return resource('applies', runApplyId(view.plan.id), { status });
}

/** The stub of the run's configuration version an `include=configuration_version` carries. */
export function configurationVersionStub(view: TfeRunView): Resource {
  return resource('configuration-versions', tfeConfigurationVersionId(view.run.configuration_version_id), {
    status: 'uploaded',
    source: 'tfe-api',
    speculative: view.run.plan_only,
    'auto-queue-runs': false,
    provisional: false,
  });
}

/** The person who started the run, as an `include=created_by` carries them: their username only. */
export function creatorStub(view: TfeRunView): Resource {
  return resource('users', view.run.created_by, { username: personalNamespace(view.run.created_by) });
}
