import type { Router } from 'express';
import { auditRoutes } from './audit/auditRoutes.js';
import { fleetRoutes } from './fleet/fleetRoutes.js';
import { notificationRoutes } from './notifications/notificationRoutes.js';
import { orgRoutes } from './orgs/orgRoutes.js';
import { policyRoutes } from './policies/policyRoutes.js';
import { registryRoutes } from './registry/registryRoutes.js';
import type { WebRouteDeps } from './routing.js';
import { tokenRoutes } from './tokens/tokenRoutes.js';

/** A feature's pages (`web/src/<feature>/`), mounted on the web router with what pages share. */
export type FeaturePages = (router: Router, deps: WebRouteDeps) => void;

/** Each module's pages, by module name: what `trellis-server`'s modules list mounts. */
export const FEATURE_PAGES = {
  notifications: notificationRoutes,
  policies: policyRoutes,
  fleet: fleetRoutes,
  orgs: orgRoutes,
  tokens: tokenRoutes,
  audit: auditRoutes,
  registry: registryRoutes,
} as const satisfies Record<string, FeaturePages>;
