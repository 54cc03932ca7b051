export {
  ARTIFACT_LOADERS,
  DATABASE_LOADERS,
  type DatabaseAdapter,
  openArtifactStore,
  openDatabase,
} from './adapters.js';
export {
  ConfigError,
  ensureGeneratedSecrets,
  loadConfig,
  type OAuthAppConfig,
  PROVIDERS,
  type ServerConfig,
  type Settings,
} from './config.js';
export {
  REFERENCE_BEGIN,
  REFERENCE_END,
  renderSettingsReference,
  withSettingsReference,
} from './settings/reference.js';
export type { Setting, SettingFamily, SettingsTable } from './settings/Setting.js';
export { SERVER_SETTINGS } from './settings/table.js';
export { buildContainer, resolve } from './container.js';
export {
  type ControlPlane,
  type ControlPlaneOptions,
  createControlPlane,
  type PortRegistrations,
} from './createControlPlane.js';
export { createLogger } from './logger.js';
export { MODULES, type TrellisModule } from './modules.js';
export { buildProviders, buildVcs, configuredProviders } from './providers.js';
export { VERSION } from './version.js';
