import { statusOfError, ValidationError } from '@trellis/core';
import type { Request, Router } from 'express';
import { pageQuery, type WebRouteDeps } from '../routing.js';
import { FLEET_FILTER_NAMES, type FleetFilters, fleetPage } from './fleetPage.js';

/** The fleet (issue 29): the configurations list of the API, with its filters and counts, as a page. */
export function fleetRoutes(router: Router, deps: WebRouteDeps): void {
  router.get(
    '/fleet',
    deps.headers,
    deps.signedIn(async ({ req, user, base, now, standing }) => {
      const filters = fleetFilters(req);
      try {
        const query = { ...filters, org_id: filters.org_id === '' ? undefined : filters.org_id };
        const [vines, counts] = await Promise.all([
          deps.useCases.vines.list(user, { ...query, ...pageQuery(req) }),
          deps.useCases.vines.counts(user, query),
        ]);
        // The first page follows its stream; an older page stays as it was read.
        const live = deps.live && req.query.cursor === undefined ? fleetStream(base, filters, req.query.limit) : null;
        return fleetPage({ base, filters, vines, counts, standing: await standing(), now, live });
      } catch (error) {
        if (!(error instanceof ValidationError)) throw error;
        return fleetPage({
          base,
          filters,
          vines: null,
          counts: null,
          standing: await standing(),
          now,
          error: error.message,
          status: statusOfError(error),
        });
      }
    }),
  );
}

/** `/live/fleet` with the page's filters and page size. */
function fleetStream(base: string, filters: FleetFilters, limit: unknown): string {
  const query = new URLSearchParams(filters as Record<string, string>);
  if (typeof limit === 'string') query.set('limit', limit);
  return query.size === 0 ? `${base}/live/fleet` : `${base}/live/fleet?${query}`;
}

/** The fleet's filters as the query gave them (empty ones left out). */
export function fleetFilters(req: Request): FleetFilters {
  const filters: FleetFilters = {};
  for (const name of FLEET_FILTER_NAMES) {
    const value = req.query[name];
    if (typeof value === 'string' && value !== '') filters[name] = value;
  }
  return filters;
}
