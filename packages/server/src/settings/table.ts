import { ACCESS_SETTINGS } from './access.js';
import { OPERATIONS_SETTINGS } from './operations.js';
import { OUTBOX_SETTINGS } from './outbox.js';
import { REGISTRY_SETTINGS } from './registry.js';
import { SERVING_SETTINGS } from './serving.js';
import { TERRAFORM_CLOUD_SETTINGS } from './terraformCloud.js';
import { WORK_SETTINGS } from './work.js';

/**
 * Every environment variable of `trellis-server`, one row each (`Setting.ts`), in the order of the
 * reference `docs/configuration.md`, which `npm run docs:config` writes from it. A new setting is
 * one row in the file of its topic, and its use; `loadConfig` derives what depends on several rows.
 */
export const SERVER_SETTINGS = {
  ...SERVING_SETTINGS,
  ...ACCESS_SETTINGS,
  ...WORK_SETTINGS,
  ...OUTBOX_SETTINGS,
  ...OPERATIONS_SETTINGS,
  ...TERRAFORM_CLOUD_SETTINGS,
  ...REGISTRY_SETTINGS,
};
