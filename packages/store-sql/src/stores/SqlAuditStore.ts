import {
  AUDIT_ACTOR_TYPES,
  type AuditActor,
  type AuditEntry,
  type AuditFilter,
  type AuditStore,
  isAuditAction,
  type Page,
  type PageRequest,
} from '@trellis/core';
import type { SqlSession } from '../dialects/Dialect.js';
import { jsonIn, jsonOut, type Row, textOut, textOutOrNull, timeIn, timeOut, uuidOut } from '../rows.js';
import { keysetPage } from './keysetPage.js';

export class SqlAuditStore implements AuditStore {
  constructor(private readonly db: SqlSession) {}

  async append(entry: AuditEntry): Promise<void> {
    await this.db.insert('audit_entries', {
      id: entry.id,
      owner_id: entry.owner_id,
      at: timeIn(entry.at),
      actor_type: entry.actor.type,
      actor_id: entry.actor.id,
      actor_email: entry.actor.email ?? null,
      action: entry.action,
      target_type: entry.target.type,
      target_id: entry.target.id,
      request_id: entry.request_id,
      ip: entry.ip,
      details: jsonIn(entry.details),
    });
  }

  async page(ownerId: string, filter: AuditFilter, request: PageRequest): Promise<Page<AuditEntry>> {
    const query = this.db.table('audit_entries').where({ owner_id: ownerId });
    if (filter.action !== undefined) query.where({ action: filter.action });
    if (filter.target_id !== undefined) query.where({ target_id: filter.target_id });
    const actor = filter.actor;
    if (actor !== undefined) query.where((who) => who.where({ actor_id: actor }).orWhere({ actor_email: actor }));
    return keysetPage(query, 'at', request, toAuditEntry);
  }

  async pruneOlderThan(before: string): Promise<number> {
    return this.db.table('audit_entries').where('at', '<', timeIn(before)).delete();
  }
}

function toAuditEntry(row: Row): AuditEntry {
  const type = textOut(row.actor_type);
  if (!(AUDIT_ACTOR_TYPES as readonly string[]).includes(type)) {
    throw new TypeError(`audit_entries.actor_type holds an unknown type: ${type}`);
  }
  const action = textOut(row.action);
  if (!isAuditAction(action)) throw new TypeError(`audit_entries.action holds an unknown action: ${action}`);
  const email = textOutOrNull(row.actor_email);
  const actor: AuditActor = { type: type as AuditActor['type'], id: textOutOrNull(row.actor_id) };
  if (email !== null) actor.email = email;
  return {
    id: uuidOut(row.id),
    at: timeOut(row.at),
    actor,
    action,
    target: { type: textOut(row.target_type), id: textOut(row.target_id) },
    owner_id: uuidOut(row.owner_id),
    request_id: textOutOrNull(row.request_id),
    ip: textOutOrNull(row.ip),
    details: jsonOut(row.details),
  };
}
