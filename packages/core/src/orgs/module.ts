import type { CoreModule } from '../modules/CoreModule.js';
import { useCase } from '../modules/CoreModule.js';
import { coreServices, serviceRef } from '../tokens.js';
import { InvitationUseCases } from './InvitationUseCases.js';
import { OrgUseCases } from './OrgUseCases.js';

/** Organizations, their members and invitations (issue 12). */
export const orgServices = {
  orgs: serviceRef<OrgUseCases>('trellis.orgs.orgs'),
  invitations: serviceRef<InvitationUseCases>('trellis.orgs.invitations'),
} as const;

export const orgsModule: CoreModule = {
  name: 'orgs',
  useCases: [
    useCase('orgs', orgServices.orgs, (get) => new OrgUseCases(get(coreServices.deps))),
    useCase('invitations', orgServices.invitations, (get) => new InvitationUseCases(get(coreServices.deps))),
  ],
};
