/**
 * The API contract (issues 11 §1, 29): every operation as data (`operations`), with every request
 * and response schema, written once. `http` implements each operation (validating requests with
 * its schemas, generating the OpenAPI document and docs/api.md from it); `client` calls the
 * operations (paths, methods and types from them) and its tests check real answers against them.
 * Enums, limits and formats come from core's constants.
 */
export * from './schemas.js';
export * from './operation.js';
export { PAGED_LIST_DESCRIPTION, PAGED_LIST_HEADERS } from './paging.js';
export { operations, WEBHOOK_OPERATIONS } from './operations/index.js';
export { renderClientRoutes } from './clientRoutes.js';
