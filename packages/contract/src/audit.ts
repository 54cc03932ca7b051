/** The audit log (issue 14): `GET /api/audit`. */
import { AUDIT_ACTIONS, AUDIT_ACTOR_TYPES } from '@trellis/core';
import { z } from 'zod';
import { isoTime, PageQuery, uuid } from './common.js';

export const ListAuditQuery = PageQuery.extend({
  action: z.enum(AUDIT_ACTIONS).optional().describe('only entries of this action'),
  actor: z
    .string()
    .max(320)
    .optional()
    .describe("only entries of this actor: its id (a user's, a token's, an agent's) or email"),
  target_id: z.uuid().optional().describe('only entries about this record'),
  org_id: z
    .union([z.uuid(), z.literal('personal')])
    .optional()
    .describe(
      "an organization's log (its admins and owners); absent or `personal`: your own (an organization token: its organization's)",
    ),
});

export const AuditEntry = z.object({
  id: uuid,
  at: isoTime,
  actor: z.object({
    type: z.enum(AUDIT_ACTOR_TYPES),
    id: z.string().nullable().describe("the user's, API token's or agent's id; null for the server itself"),
    email: z.string().optional().describe('the person acting (for a token: its creator)'),
  }),
  action: z.enum(AUDIT_ACTIONS),
  target: z.object({ type: z.string(), id: z.string() }),
  owner_id: uuid.describe('whose log: the user or the organization'),
  request_id: z.string().nullable().describe('the `X-Request-Id` of the request that acted'),
  ip: z.string().nullable().describe('the client address (`TRELLIS_TRUST_PROXY` decides whose forwarding is believed)'),
  details: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])),
});

export const AuditList = z.object({ entries: z.array(AuditEntry) });
