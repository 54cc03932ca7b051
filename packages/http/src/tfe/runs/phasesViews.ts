import type { PhaseView, PolicyCheckView, QueuedRun } from '@trellis/core';
import { linkage, type Resource, resource } from '../jsonapi.js';

/**
 * JSON:API documents of a run's phases (issue 27), as go-tfe reads them: `plans`, `applies`,
 * `policy-checks`, the queue's `runs` and `organization-capacity`. Times go out only when they
 * happened (go-tfe parses each as RFC 3339, an empty string would not parse).
 */
export function phase(view: PhaseView, logReadUrl: string): Resource {
  const attributes: Record<string, unknown> = {
    status: view.status,
    'has-changes': view.hasChanges,
    'resource-additions': view.additions,
    'resource-changes': view.changes,
    'resource-destructions': view.destructions,
    'resource-imports': 0,
    'log-read-url': logReadUrl,
    'status-timestamps': view.statusTimestamps,
  };
  if (view.kind === 'plan') attributes['generated-configuration'] = false;
  return resource(
    view.kind === 'plan' ? 'plans' : 'applies',
    view.id,
    attributes,
    {},
    {
      self: `/api/v2/${view.kind === 'plan' ? 'plans' : 'applies'}/${view.id}`,
    },
  );
}

export function policyCheck(view: PolicyCheckView, runId: string): Resource {
  const failed = view.counts.mandatoryFailed + view.counts.advisoryFailed;
  return resource(
    'policy-checks',
    view.id,
    {
      status: view.status,
      scope: 'organization',
      result: {
        result: view.status === 'passed' || view.status === 'overridden',
        passed: view.counts.passed,
        'total-failed': failed,
        'hard-failed': 0,
        'soft-failed': view.counts.mandatoryFailed,
        'advisory-failed': view.counts.advisoryFailed,
        duration: 0,
        // Sentinel's report, in its shape, with OPA's results (what `result.sentinel` holds on HCP Terraform).
        sentinel: {
          'schema-version': '1.0.0',
          data: {
            trellis: {
              'can-override': view.overridable,
              error: null,
              policies: view.results.map((result) => ({
                policy: result.name,
                version: result.version,
                'enforcement-level': result.enforcement,
                result: result.passed,
                messages: result.messages,
              })),
              result: view.status === 'passed' || view.status === 'overridden',
            },
          },
        },
      },
      actions: { 'is-overridable': view.overridable },
      permissions: { 'can-override': view.canOverride },
      'status-timestamps': view.statusTimestamps,
    },
    { run: linkage('runs', runId) },
    { output: `/api/v2/policy-checks/${view.id}/output` },
  );
}

/** A job of the queue, as a run: its id, place and a status of the phase it is in. */
export function queuedRun(run: QueuedRun): Resource {
  const { job } = run;
  const applying = job.job_type !== 'PLAN';
  const status =
    job.status === 'PROCESSING' ? (applying ? 'applying' : 'planning') : applying ? 'apply_queued' : 'plan_queued';
  return resource('runs', run.runId, {
    status,
    'position-in-queue': run.position,
    'created-at': job.created_at,
    'is-destroy': job.job_type === 'DESTROY' || job.config_snapshot.destroy === true,
    source: 'tfe-api',
  });
}

export function capacity(name: string, pending: number, running: number): Resource {
  return resource('organization-capacity', name, { pending, running });
}
