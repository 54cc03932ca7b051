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
} from './config.js';
export { buildContainer, resolve } from './container.js';
export {
  type ControlPlane,
  type ControlPlaneOptions,
  createControlPlane,
  type PortRegistrations,
} from './createControlPlane.js';
export { createLogger } from './logger.js';
export { buildProviders, buildVcs, configuredProviders } from './providers.js';
export { VERSION } from './version.js';
