export { type AuthDeps, authenticate, secretsEqual } from './auth/authenticate.js';
export { JwtTokenSigner, MIN_JWT_SECRET_BYTES } from './auth/JwtTokenSigner.js';
export { type Session, SessionCookies, type SessionOptions } from './auth/SessionCookies.js';
export { type ApiOptions, apiRoutes, createApi, type WebSessionAccess } from './createApi.js';
export { type Problem, problem, problemErrorHandler, problemFromDomainError, sendProblem } from './errors/problem.js';
export { type Logger, silentLogger } from './logger.js';
export { buildOpenApiDocument } from './routing/openapi.js';
export type { AuthKind, RouteSpec } from './routing/route.js';
export { apiOpenApiDocument, renderApiMarkdown } from './routing/apiReference.js';
