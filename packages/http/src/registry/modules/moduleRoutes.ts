import type { UseCases } from '@trellis/core';
import type { Request, Response } from 'express';
import { problem, sendProblem } from '../../errors/problem.js';
import { pagedList } from '../../routing/pagedList.js';
import { implement, type RouteSpec } from '../../routing/route.js';
import { operations } from '@trellis/contract';

/** A tarball comes as gzip or as plain bytes; a JSON or form body is a mistake. */
const TARBALL_TYPES = ['application/gzip', 'application/x-gzip', 'application/octet-stream', 'application/x-tar'];

/** False (and the `415` answered) when the body is not a tarball's type. */
function isTarball(req: Request, res: Response): boolean {
  const type = (req.headers['content-type'] ?? 'application/octet-stream').split(';')[0]?.trim().toLowerCase() ?? '';
  if (TARBALL_TYPES.includes(type)) return true;
  res.setHeader('Connection', 'close');
  sendProblem(
    res,
    problem(415, 'unsupported_media_type', `a module is uploaded as application/gzip (a .tar.gz), not ${type}`),
  );
  return false;
}

/** The module registry's own API (issue 28, docs/registry.md); the stock CLI's protocol is `modulesProtocol`. */
export function moduleRoutes(useCases: UseCases): RouteSpec[] {
  return [
    implement(operations.publishModuleVersion, async ({ req, res, user, params }) => {
      if (!isTarball(req, res)) return undefined;
      const declared = Number(req.headers['content-length']);
      const version = await useCases.registryModules.publish(
        user,
        params,
        req,
        Number.isFinite(declared) ? declared : null,
      );
      return { status: 201, body: version };
    }),
    implement(operations.listModules, async ({ req, user, query }) =>
      pagedList(req, 'modules', await useCases.registryModules.list(user, query)),
    ),
    implement(operations.listModuleVersions, async ({ user, params }) => ({
      status: 200,
      body: await useCases.registryModules.versions(user, params),
    })),
    implement(operations.getModuleUsage, async ({ user, params }) => ({
      status: 200,
      body: await useCases.moduleUsage.usage(user, params),
    })),
    implement(operations.deprecateModuleVersion, async ({ user, params, body }) => ({
      status: 200,
      body: await useCases.registryModules.deprecate(user, params, body),
    })),
    implement(operations.deleteModuleVersion, async ({ user, params }) => {
      await useCases.registryModules.deleteVersion(user, params);
      return { status: 204 };
    }),
    implement(operations.deleteModule, async ({ user, params }) => {
      await useCases.registryModules.deleteModule(user, params);
      return { status: 204 };
    }),
  ];
}
