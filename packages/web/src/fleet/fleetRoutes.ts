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
        return fleetPage({ base, filters, vines, counts, standing: await standing(), now });
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

function fleetFilters(req: Request): FleetFilters {
  const filters: FleetFilters = {};
  for (const name of FLEET_FILTER_NAMES) {
    const value = req.query[name];
    if (typeof value === 'string' && value !== '') filters[name] = value;
  }
  return filters;
}
