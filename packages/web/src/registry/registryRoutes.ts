import { DomainError, type ModuleDescription, type ModuleRepositoryView } from '@trellis/core';
import type { Router } from 'express';
import type { WebRouteDeps } from '../routing.js';
import { mirrorRoutes } from './mirrorRoutes.js';
import { providerRoutes } from './providerRoutes.js';
import { chooseNamespace } from './registryNav.js';
import { moduleListPage, modulePage } from './registryPages.js';

/**
 * The registry's pages (issue 28), a tab each: a namespace's modules, and a module's versions with
 * the README, inputs and outputs of one version read from its tarball, and its git repository
 * (read-only: publishing and connecting are the API's and the CLI's); its private providers and
 * GPG keys (`providerRoutes.ts`); its provider mirror (`mirrorRoutes.ts`).
 */
export function registryRoutes(router: Router, deps: WebRouteDeps): void {
  router.get(
    '/registry',
    deps.headers,
    deps.signedIn(async ({ req, user, base, now, standing }) => {
      const choice = chooseNamespace(req.query.namespace, user, await standing());
      const modules = await deps.useCases.registryModules.list(user, {
        namespace: choice.namespace,
        limit: req.query.limit,
        cursor: req.query.cursor,
      });
      return moduleListPage({ base, choice, modules, now });
    }),
  );

  providerRoutes(router, deps);
  mirrorRoutes(router, deps);

  router.get(
    '/registry/:namespace/:name/:system',
    deps.headers,
    deps.signedIn(async ({ req, user, base, now }) => {
      const address = { namespace: req.params.namespace, name: req.params.name, system: req.params.system };
      const { module, versions } = await deps.useCases.registryModules.versions(user, address);
      const asked = typeof req.query.version === 'string' ? req.query.version : null;
      const shown =
        versions.find((version) => version.version === asked) ??
        versions.find((version) => version.version === module.latest_version) ??
        versions[0] ??
        null;
      let description: ModuleDescription | null = null;
      let problem: string | null = null;
      if (shown) {
        try {
          description = await deps.useCases.moduleDocs.describe(user, { ...address, version: shown.version });
        } catch (error) {
          if (!(error instanceof DomainError)) throw error;
          problem = error.message;
        }
      }
      const repository = await findRepository(deps, user, address);
      const usage = await deps.useCases.moduleUsage.usage(user, address);
      const host = req.get('host') ?? 'localhost';
      return modulePage({ base, host, module, versions, shown, description, problem, repository, usage, now });
    }),
  );
}

async function findRepository(
  deps: WebRouteDeps,
  user: Parameters<WebRouteDeps['useCases']['moduleRepositories']['get']>[0],
  address: { namespace: unknown; name: unknown; system: unknown },
): Promise<ModuleRepositoryView | null> {
  try {
    return await deps.useCases.moduleRepositories.get(user, address);
  } catch (error) {
    if (error instanceof DomainError && error.code === 'module_repository_not_found') return null;
    throw error;
  }
}
