import type { UseCases } from '@trellis/core';
import { auditRoutes } from './audit/auditRoutes.js';
import { orgRoutes } from './orgs/orgRoutes.js';
import { planReviewRoutes } from './policies/planReviewRoutes.js';
import { policyRoutes } from './policies/policyRoutes.js';
import { driftRoutes } from './drift/driftRoutes.js';
import { notificationRoutes } from './routes/notificationRoutes.js';
import { vcsFeedbackRoutes } from './routes/vcsFeedbackRoutes.js';
import { moduleRoutes } from './registry/modules/moduleRoutes.js';
import { moduleRepositoryRoutes } from './registry/gitTags/moduleRepositoryRoutes.js';
import type { RouteSpec } from './routing/route.js';
import { tokenRoutes } from './tokens/tokenRoutes.js';
import { gitWebhookRoutes } from './vcs/gitWebhookRoutes.js';
import { repositoryRoutes } from './vcs/repositoryRoutes.js';
import { vcsRoutes } from './vcs/vcsRoutes.js';
import { oidcRoutes } from './workloadIdentity/oidcRoutes.js';
import { mirrorRoutes } from './registry/mirror/mirrorRoutes.js';
import { providerRoutes } from './registry/providers/providerRoutes.js';

/** A feature's API routes (`http/src/<feature>/`), over the use cases. */
export type FeatureRoutes = (useCases: UseCases) => RouteSpec[];

/** The git-driven runs' routes: connections, the repositories to pick, feedback, webhooks. */
export const vcsFeatureRoutes: FeatureRoutes = (useCases) => [
  ...repositoryRoutes(useCases),
  ...vcsRoutes(useCases),
  ...vcsFeedbackRoutes(useCases),
  ...gitWebhookRoutes(useCases),
];

/** Policies and the plans' reviews (approve, reject, override). */
export const policyFeatureRoutes: FeatureRoutes = (useCases) => [
  ...policyRoutes(useCases),
  ...planReviewRoutes(useCases),
];

/** Each module's routes, by module name: what `trellis-server`'s modules list mounts. */
export const FEATURE_ROUTES = {
  notifications: notificationRoutes,
  policies: policyFeatureRoutes,
  vcs: vcsFeatureRoutes,
  drift: driftRoutes,
  orgs: orgRoutes,
  tokens: tokenRoutes,
  audit: auditRoutes,
  workloadIdentity: oidcRoutes,
  registryModules: moduleRoutes,
  registryProviders: providerRoutes,
  mirror: mirrorRoutes,
  moduleRepositories: moduleRepositoryRoutes,
} as const satisfies Record<string, FeatureRoutes>;
