import { operations } from './operations/index.js';

/**
 * The method and path of each operation of the contract, as TypeScript source: what
 * `@trellis/client` calls by operationId without loading the contract's schemas (a process that
 * only sends requests, such as the agent, keeps that memory). Written by `npm run docs:api`;
 * `test/api-docs.test.ts` fails when the committed file differs.
 */
export function renderClientRoutes(): string {
  const rows = Object.values(operations)
    .map((op) => [op.operationId, op.method.toUpperCase(), op.path] as const)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([id, method, path]) => `  ${id}: ['${method}', '${path}'],`);
  return [
    '// Generated from the operations of @trellis/contract by `npm run docs:api`: do not edit.',
    '// test/api-docs.test.ts fails when this file is stale.',
    '',
    '/** Each operation of the contract: its method and its path (`{param}`s filled by `pathOf`). */',
    'export const OPERATION_ROUTES = {',
    ...rows,
    '} as const;',
    '',
  ].join('\n');
}
