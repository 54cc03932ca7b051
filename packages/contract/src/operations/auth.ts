/** The CLI login (device flow) and who am I: each operation as data (served by `http/src/routes/authRoutes.ts`). */
import { operation } from '../operation.js';
import {
  ExchangeBody,
  ExchangeResponse,
  GenerateBody,
  GenerateResponse,
  RefreshBody,
  TokenPairResponse,
  WhoAmIResponse,
} from '../schemas.js';

export const generateCliLogin = operation({
  method: 'post',
  path: '/api/auth/cli/generate',
  operationId: 'generateCliLogin',
  summary: 'Approve a CLI login from the browser',
  description:
    'Records the device code the CLI made with a fresh 6-character verification code, which the browser shows so the person can type it into the CLI. Web session only; a device code can be approved once.',
  tags: ['auth'],
  auth: 'session',
  body: GenerateBody,
  responses: { 201: { description: 'The code to show', schema: GenerateResponse } },
});

export const exchangeCliLogin = operation({
  method: 'post',
  path: '/api/auth/cli/exchange',
  operationId: 'exchangeCliLogin',
  summary: 'Trade an approved device code and its verification code for tokens',
  description:
    'Errors use OAuth words as `code`: `authorization_pending` (not approved yet), `expired_token`, `invalid_grant` (wrong code, used, or dead after 5 wrong attempts).',
  tags: ['auth'],
  auth: 'none',
  rateLimit: { windowSeconds: 60, limit: 20 },
  body: ExchangeBody,
  responses: { 200: { description: 'Tokens', schema: ExchangeResponse } },
});

export const refreshCliTokens = operation({
  method: 'post',
  path: '/api/auth/cli/refresh',
  operationId: 'refreshCliTokens',
  summary: 'Rotate the CLI tokens',
  description:
    'Both tokens are replaced and the old refresh token stops working. Presenting an already rotated refresh token revokes every token of its login.',
  tags: ['auth'],
  auth: 'none',
  rateLimit: { windowSeconds: 60, limit: 60 },
  body: RefreshBody,
  responses: { 200: { description: 'New tokens', schema: TokenPairResponse } },
});

export const logoutCli = operation({
  method: 'post',
  path: '/api/auth/cli/logout',
  operationId: 'logoutCli',
  summary: 'Revoke a CLI login (its refresh token and every rotation of it)',
  tags: ['auth'],
  auth: 'none',
  rateLimit: { windowSeconds: 60, limit: 60 },
  body: RefreshBody,
  responses: { 204: { description: 'Revoked' } },
});

export const whoAmI = operation({
  method: 'get',
  path: '/api/cli/whoami',
  operationId: 'whoAmI',
  summary: 'The signed-in user',
  tags: ['auth'],
  auth: 'user',
  responses: { 200: { description: 'The user', schema: WhoAmIResponse } },
});

/** In the order the API reference lists them. */
export const authOperations = { generateCliLogin, exchangeCliLogin, refreshCliTokens, logoutCli, whoAmI };
