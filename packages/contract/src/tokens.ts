/** API tokens for automation (issue 12): `POST/GET /api/tokens`, `DELETE /api/tokens/{id}`. */
import { API_TOKEN_MAX_DAYS, API_TOKEN_MIN_DAYS, ORG_ROLES } from '@trellis/core';
import { z } from 'zod';
import { isoTime, PageQuery, recordName, uuid } from './common.js';

export const CreateTokenBody = z.object({
  name: recordName,
  org_id: z.uuid().optional().describe('an organization token (absent: a personal token, which acts as you)'),
  role: z
    .enum(ORG_ROLES)
    .optional()
    .describe("an organization token's role (default viewer, never above yours); a personal token takes none"),
  expires_in_days: z
    .number()
    .int()
    .min(API_TOKEN_MIN_DAYS)
    .max(API_TOKEN_MAX_DAYS)
    .optional()
    .describe(`${API_TOKEN_MIN_DAYS} to ${API_TOKEN_MAX_DAYS}; absent, the token does not expire`),
});

export const ListTokensQuery = PageQuery.extend({
  org_id: z.uuid().optional().describe("the organization's tokens (for its admins); absent, your personal tokens"),
});

export const ApiTokenRecord = z.object({
  id: uuid,
  name: z.string(),
  org_id: uuid.nullable(),
  role: z.enum(ORG_ROLES).nullable(),
  created_at: isoTime,
  expires_at: isoTime.nullable(),
  last_used_at: isoTime.nullable().describe('recorded at most once a minute'),
});

export const CreatedToken = ApiTokenRecord.extend({
  token: z.string().describe('`trt_` + 43 base64url characters; shown only once, store it safely'),
});

export const TokenList = z.object({ tokens: z.array(ApiTokenRecord) });
