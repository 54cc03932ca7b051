import type { CoreModule } from '../modules/CoreModule.js';
import { fleetHooks } from './fleetHooks.js';

/**
 * The fleet (issue 29): its list is the configurations list's (`VineUseCases.list` and
 * `counts`); this module keeps what it filters on up to date as plans end.
 */
export const fleetModule: CoreModule = {
  name: 'fleet',
  useCases: [],
  hooks: () => ({ report: fleetHooks }),
};
