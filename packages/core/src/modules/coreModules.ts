import { auditModule } from '../audit/module.js';
import { driftModule } from '../drift/module.js';
import { fleetModule } from '../fleet/module.js';
import { notificationsModule } from '../notifications/module.js';
import { orgsModule } from '../orgs/module.js';
import { outboxModule } from '../outbox/module.js';
import { policiesModule } from '../policies/module.js';
import { registryModulesModule } from '../registry/modules/module.js';
import { moduleRepositoriesModule } from '../registry/gitTags/module.js';
import { tokensModule } from '../tokens/module.js';
import { vcsModule } from '../vcs/module.js';
import { mirrorModule } from '../registry/mirror/module.js';
import { workloadIdentityModule } from '../workloadIdentity/module.js';
import { registryProvidersModule } from '../registry/providers/module.js';
import { coreModule } from './spine.js';
import type { CoreModule } from './CoreModule.js';

/**
 * Core's part of every module, in the order of `trellis-server`'s list (`modules.ts`, which a test
 * keeps in step): the order hooks run in within a stage. Used alone by `createUseCases`.
 */
export const CORE_MODULES: readonly CoreModule[] = [
  coreModule,
  notificationsModule,
  policiesModule,
  vcsModule,
  outboxModule,
  driftModule,
  fleetModule,
  orgsModule,
  tokensModule,
  auditModule,
  workloadIdentityModule,
  registryModulesModule,
  registryProvidersModule,
  mirrorModule,
  moduleRepositoriesModule,
];
