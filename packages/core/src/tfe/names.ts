import { isUuid } from '../domain/validation.js';

/**
 * How Trellis records are named in the Terraform Cloud protocol (issue 26): an organization by
 * its name (a person's own records by their personal namespace), a workspace `ws-<vine id>`, a
 * project `prj-<vineyard id>`, a state version `sv-<id>` (or `sv-<upload id>` before its bytes
 * arrive), an output `wsout-<version>-<hex name>`, a variable `var-<hex name>`. Every id keeps to
 * go-tfe's `[A-Za-z0-9._-]`.
 */

/**
 * The organization name a person's own records go by: `u-` and the first 12 hex digits of their
 * id. Only its owner ever resolves it, so it need not be looked up in the store.
 */
export function personalNamespace(userId: string): string {
  return `u-${userId.replaceAll('-', '').slice(0, 12).toLowerCase()}`;
}

export function workspaceId(vineId: string): string {
  return `ws-${vineId}`;
}

/** The vine id of a workspace id, or null when it is not one. */
export function vineIdOf(id: unknown): string | null {
  if (typeof id !== 'string' || !id.startsWith('ws-')) return null;
  const rest = id.slice(3);
  return isUuid(rest) ? rest.toLowerCase() : null;
}

export function projectId(vineyardId: string): string {
  return `prj-${vineyardId}`;
}

export function vineyardIdOf(id: unknown): string | null {
  if (typeof id !== 'string' || !id.startsWith('prj-')) return null;
  const rest = id.slice(4);
  return isUuid(rest) ? rest.toLowerCase() : null;
}

export function stateVersionId(id: number): string {
  return `sv-${id}`;
}

/** A state version id: a stored version's number, or the upload id of one created ahead of its bytes. */
export type StateVersionRef = { kind: 'version'; id: number } | { kind: 'upload'; uploadId: string };

export function stateVersionRefOf(id: unknown): StateVersionRef | null {
  if (typeof id !== 'string' || !id.startsWith('sv-')) return null;
  const rest = id.slice(3);
  if (/^[1-9]\d{0,14}$/.test(rest)) return { kind: 'version', id: Number(rest) };
  return isUuid(rest) ? { kind: 'upload', uploadId: rest.toLowerCase() } : null;
}

export function outputId(versionId: number, name: string): string {
  return `wsout-${versionId}-${Buffer.from(name, 'utf8').toString('hex')}`;
}

export function outputRefOf(id: unknown): { versionId: number; name: string } | null {
  const match = typeof id === 'string' ? /^wsout-([1-9]\d{0,14})-((?:[0-9a-f]{2}){1,256})$/.exec(id) : null;
  if (!match?.[1] || !match[2]) return null;
  return { versionId: Number(match[1]), name: Buffer.from(match[2], 'hex').toString('utf8') };
}

export function variableId(name: string): string {
  return `var-${Buffer.from(name, 'utf8').toString('hex')}`;
}

export function variableNameOf(id: unknown): string | null {
  const match = typeof id === 'string' ? /^var-((?:[0-9a-f]{2}){1,128})$/.exec(id) : null;
  return match?.[1] ? Buffer.from(match[1], 'hex').toString('utf8') : null;
}

/** The vineyard a workspace made without a project goes in (TFE's "Default Project"). */
export const DEFAULT_PROJECT_NAME = 'default';
