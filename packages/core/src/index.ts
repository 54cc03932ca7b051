export * from './domain/actors.js';
export * from './domain/enums.js';
export * from './domain/errors.js';
export * from './domain/jobStateMachine.js';
export * from './domain/records.js';
export * from './domain/validation.js';
export * from './domain/vineStateMachine.js';
export * from './domain/workerStateMachine.js';

export * from './auth/tokenLifetimes.js';
export * from './auth/verificationCode.js';
export * from './auth/workerToken.js';

export * from './config/canonicalJson.js';
export * from './config/configSnapshot.js';

export type * from './ports/ArtifactStore.js';
export type * from './ports/CliLoginStore.js';
export type * from './ports/Clock.js';
export type * from './ports/CloudIdentityStore.js';
export type * from './ports/EventBus.js';
export type * from './ports/IdentityStore.js';
export type * from './ports/JobStore.js';
export type * from './ports/LogStore.js';
export type * from './ports/PlanArtifactStore.js';
export type * from './ports/Random.js';
export type * from './ports/RefreshTokenStore.js';
export type * from './ports/StateStore.js';
export type * from './ports/ReleaseStore.js';
export type * from './ports/TokenSigner.js';
export type * from './ports/UserStore.js';
export type * from './ports/VineStore.js';
export type * from './ports/VineyardStore.js';
export type * from './ports/WorkerStore.js';
export { ownerScope, systemScope } from './ports/UnitOfWork.js';
export type { Scope, Stores, UnitOfWork } from './ports/UnitOfWork.js';

export { CryptoRandom } from './system/CryptoRandom.js';
export { InProcessEventBus } from './system/InProcessEventBus.js';
export { SystemClock } from './system/SystemClock.js';

export * from './usecases/AuthUseCases.js';
export * from './usecases/ConfigurationUseCases.js';
export * from './usecases/configurationInput.js';
export * from './usecases/CoreDeps.js';
export * from './usecases/createUseCases.js';
export * from './usecases/finalizeDeployment.js';
export * from './usecases/JobUseCases.js';
export * from './usecases/LogUseCases.js';
export * from './usecases/PlanArtifactUseCases.js';
export * from './usecases/ReleaseUseCases.js';
export * from './usecases/StateUseCases.js';
export * from './usecases/VineyardUseCases.js';
export * from './usecases/views.js';
export * from './usecases/WorkerUseCases.js';
export * from './tokens.js';
