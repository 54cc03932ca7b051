import { personalNamespace, type UserActor } from '@trellis/core';
import { type Html, html } from '../html.js';
import type { FormProblem } from '../orgs/orgPages.js';
import type { Standing } from '../standing.js';

/** The registry's tabs, each a page of one namespace (`?namespace=`). */
export type RegistryTab = 'modules' | 'providers' | 'gpg-keys' | 'mirror';

const TABS: readonly { tab: RegistryTab; label: string; path: string }[] = [
  { tab: 'modules', label: 'Modules', path: '/registry' },
  { tab: 'providers', label: 'Providers', path: '/registry/providers' },
  { tab: 'gpg-keys', label: 'GPG keys', path: '/registry/gpg-keys' },
  { tab: 'mirror', label: 'Mirror', path: '/registry/mirror' },
];

/** Where a tab of a namespace is. */
export function tabHref(base: string, tab: RegistryTab, namespace: string): string {
  const path = TABS.find((entry) => entry.tab === tab)?.path ?? '/registry';
  return `${base}${path}?namespace=${encodeURIComponent(namespace)}`;
}

/** A namespace of the person's, and who owns it: their own `u-…`, or an organization they belong to. */
export interface RegistryNamespaceChoice {
  /** The namespace shown. */
  namespace: string;
  /** The person's namespaces: their own, then their organizations' by name. */
  namespaces: readonly string[];
  /** The owner of the namespace shown, when it is one of the person's (else the use case says 404). */
  ownerId: string | null;
}

/** The namespace a registry page shows: the one asked (`?namespace=`, or a form's), else the person's own. */
export function chooseNamespace(asked: unknown, user: UserActor, standing: Standing): RegistryNamespaceChoice {
  const own = personalNamespace(user.userId);
  const namespaces = [own, ...standing.orgs.map((org) => org.name).sort()];
  const namespace = typeof asked === 'string' && asked !== '' ? asked : own;
  return { namespace, namespaces, ownerId: ownerOf(namespace, user, standing) };
}

/** The owner of a namespace the person belongs to (organization names are case-insensitive), or null. */
export function ownerOf(namespace: string, user: UserActor, standing: Standing): string | null {
  if (namespace === personalNamespace(user.userId)) return user.userId;
  const org = standing.orgs.find((candidate) => candidate.name.toLowerCase() === namespace.toLowerCase());
  return org?.id ?? null;
}

/** The tabs and the namespace chooser every registry page starts with. */
export function registryHeader(base: string, tab: RegistryTab, choice: RegistryNamespaceChoice): Html {
  const { namespace, namespaces } = choice;
  const current = TABS.find((entry) => entry.tab === tab) ?? TABS[0];
  return html`<nav class="registry-tabs" aria-label="Registry">${TABS.map(
    (entry) =>
      html`<a href="${tabHref(base, entry.tab, namespace)}" data-registry-tab="${entry.tab}"${entry.tab === tab ? html` aria-current="page"` : ''}>${entry.label}</a>`,
  )}</nav>
<form method="get" action="${base}${current?.path ?? '/registry'}" class="namespace-chooser inline-form">
  <label for="registry-namespace">Namespace</label>
  <select name="namespace" id="registry-namespace">${namespaces.map(
    (name) => html`<option value="${name}"${name === namespace ? html` selected` : ''}>${name}</option>`,
  )}</select>
  <button type="submit" class="button quiet">Show</button>
</form>`;
}

/** What a refused form said, above the form it was sent from. */
export function problemBox(problem: FormProblem | null | undefined): Html | string {
  return problem ? html`<p class="error" role="alert" data-form-error>${problem.message}</p>` : '';
}

/** A hash shortened for a table (`h1:abcdefghij…`), whole in its title. */
export function shortHash(hash: string): Html {
  const [scheme, value = ''] = hash.includes(':') ? (hash.split(':', 2) as [string, string]) : ['', hash];
  const shown = value.length > 12 ? `${value.slice(0, 12)}…` : value;
  return html`<code title="${hash}" data-hash="${scheme}">${scheme ? `${scheme}:` : ''}${shown}</code>`;
}

/** A size for people: bytes, KiB or MiB. */
export function byteSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}
