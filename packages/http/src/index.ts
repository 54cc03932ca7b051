export { type AuthDeps, authenticate, secretsEqual } from './auth/authenticate.js';
export { JwtTokenSigner, MIN_JWT_SECRET_BYTES } from './auth/JwtTokenSigner.js';
export { JoseJwsSigner } from './auth/JoseJwsSigner.js';
export { type Session, SessionCookies, type SessionOptions } from './auth/SessionCookies.js';
export { SignInCookies } from './auth/SignInCookies.js';
export {
  type ApiLimits,
  type ApiOptions,
  apiRoutes,
  createApi,
  DEFAULT_API_LIMITS,
  type TrustProxy,
  type WebSessionAccess,
} from './createApi.js';
export { FEATURE_ROUTES, type FeatureRoutes, vcsFeatureRoutes } from './featureRoutes.js';
export { ClaimLongPolls, type LongPollLimits } from './limits/ClaimLongPolls.js';
export { clientKey, type FailureLimit, FailureLimiter } from './limits/FailureLimiter.js';
export { SharedRateLimitStore } from './limits/SharedRateLimitStore.js';
export { type Problem, problem, problemErrorHandler, problemFromDomainError, sendProblem } from './errors/problem.js';
export { type Logger, silentLogger } from './logger.js';
export {
  DEFAULT_LIVE_LOG_LIMITS,
  type LiveLogLimits,
  type LiveLogStats,
  LiveLogStreams,
} from './realtime/LiveLogStreams.js';
export { buildOpenApiDocument } from './routing/openapi.js';
export { nextPageUrl, pagedList } from './routing/pagedList.js';
export type { AuthKind, RouteSpec } from './routing/route.js';
export { apiOpenApiDocument, renderApiMarkdown } from './routing/apiReference.js';
export { ApiMetrics, type ApiMetricsOptions } from './observability/ApiMetrics.js';
export { JobFlowMetrics } from './observability/JobFlowMetrics.js';
export { metricsEndpoint } from './observability/metricsEndpoint.js';
export { ServiceDiscovery, TFE_API_BASE, TFE_LOGIN_AUTHORIZE_PATH, TFE_LOGIN_TOKEN_PATH } from './tfe/discovery.js';
export { type TfeProtocolOptions, tfeProtocol } from './tfe/tfeProtocol.js';
export { actorOf } from './tfe/tfeAuth.js';
export { REGISTRY_PROTOCOLS } from './registry/protocols.js';
export { moduleTarballObject, modulesProtocol } from './registry/modules/modulesProtocol.js';
export { providerFileObject, providersProtocol } from './registry/providers/providersProtocol.js';
export {
  REGISTRY_BASES,
  type RegistryProtocol,
  type RegistryProtocolDeps,
} from './registry/registryProtocols.js';
export * as jsonApi from './tfe/jsonapi.js';
