export { type ProblemBody, TrellisApiError, TrellisConnectionError, TrellisRedirectError } from './errors.js';
export { readServerSentEvents, type ServerSentEvent } from './sse.js';
export {
  type ClientAuth,
  type ClientOptions,
  type CreateConfigurationInput,
  type UpdateConfigurationInput,
  type CreateJobInput,
  type JobListFilter,
  type FleetListFilter,
  type ListPage,
  type OwnerOptions,
  nextCursorOf,
  type PageOptions,
  type LogStreamEvent,
  type ModuleAddress,
  type ModuleVersionAddress,
  TrellisClient,
} from './TrellisClient.js';
export { type LockOptions, LockTimeoutError, withFileLock } from './login/FileLock.js';
export { jwtExpiry } from './login/jwt.js';
export {
  DamagedLoginError,
  expiresSoon,
  LoginStore,
  type LoginStoreOptions,
  loginFilePath,
  REFRESH_MARGIN_MS,
  type StoredLogin,
  storedLogin,
} from './login/LoginStore.js';
export {
  Backoff,
  type BackoffOptions,
  isTransient,
  type RetryClock,
  type RetryOptions,
  retry,
  systemClock,
} from './retry.js';
/** The types of the API contract, for callers (cli, agent) that reach it through this client. */
export type * from '@trellis/contract';
