import type { UseCases } from '@trellis/core';
import { pagedList } from '../routing/pagedList.js';
import { implement, type RouteSpec } from '../routing/route.js';
import { operations } from '@trellis/contract';

/** What people do from the CLI (SPEC §4.3); a web session works too. */
export function cliRoutes(useCases: UseCases): RouteSpec[] {
  return [
    implement(operations.listVineyards, async ({ req, user, query }) =>
      pagedList(req, 'vineyards', await useCases.vineyards.list(user, query)),
    ),
    implement(operations.createVineyard, async ({ user, body }) => ({
      status: 201,
      body: await useCases.vineyards.create(user, body),
    })),
    implement(operations.getVineyard, async ({ user, params }) => ({
      status: 200,
      body: await useCases.vineyards.get(user, params.id),
    })),
    implement(operations.listConfigurations, async ({ req, user, query }) => {
      const page = await useCases.vines.list(user, query);
      const counts = query.counts === 'true' ? { counts: await useCases.vines.counts(user, query) } : {};
      return pagedList(req, 'configurations', page, counts);
    }),
    implement(operations.getConfigurationByProjectName, async ({ user, params }) => ({
      status: 200,
      body: await useCases.vines.getByProjectName(user, params.project_name),
    })),
    implement(operations.getConfiguration, async ({ user, params }) => ({
      status: 200,
      body: await useCases.vines.get(user, params.name),
    })),
    implement(operations.createConfiguration, async ({ user, body }) => ({
      status: 201,
      body: await useCases.vines.create(user, body),
    })),
    implement(operations.createJob, async ({ user, body }) => ({
      status: 201,
      body: await useCases.jobs.create(user, body),
    })),
    implement(operations.listJobs, async ({ req, user, query }) =>
      pagedList(req, 'jobs', await useCases.jobs.list(user, query)),
    ),
    implement(operations.getJob, async ({ user, params }) => ({
      status: 200,
      body: await useCases.jobWaiting.show(user, params.id),
    })),
    implement(operations.readJobLogs, async ({ user, params, query }) => ({
      status: 200,
      body: await useCases.logs.readForPerson(user, params.id, query),
    })),
    implement(operations.getPlanChanges, async ({ user, params }) => ({
      status: 200,
      body: await useCases.planArtifacts.changes(user, params.id),
    })),
    implement(operations.cancelJob, async ({ user, params }) => ({
      status: 200,
      body: await useCases.jobs.cancel(user, params.id),
    })),
    implement(operations.listWorkers, async ({ req, user, query }) =>
      pagedList(req, 'workers', await useCases.workers.listForPerson(user, query)),
    ),
    implement(operations.registerSelfHostedWorker, async ({ user, body }) => ({
      status: 201,
      body: await useCases.workers.register(user, body),
    })),
    implement(operations.getWorker, async ({ user, params }) => ({
      status: 200,
      body: await useCases.workers.getForPerson(user, params.id),
    })),
  ];
}
