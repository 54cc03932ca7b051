import { compareSemVer, type GpgKeyView, latestVersion, type ProviderVersionView } from '@trellis/core';
import { when } from '../format.js';
import { type Html, html } from '../html.js';
import type { Page } from '../layout.js';
import type { FormProblem } from '../orgs/orgPages.js';
import { problemBox, type RegistryNamespaceChoice, registryHeader, tabHref } from './registryNav.js';

/** A provider of the namespace with every version (newest first). */
export interface ProviderEntry {
  type: string;
  created_at: string;
  versions: readonly ProviderVersionView[];
}

export interface ProvidersPageInput {
  base: string;
  /** This server's host, for the source address people copy. */
  host: string;
  choice: RegistryNamespaceChoice;
  providers: readonly ProviderEntry[];
  /** The `after` of the next page of providers; null on the last. */
  next: string | null;
  /** Whether the person may delete versions (`registry.manage`): the use case checks again. */
  mayManage: boolean;
  now: Date;
  problem?: FormProblem | null;
}

/**
 * A namespace's private providers (issue 28): each one's source address and `required_providers`
 * snippet, its versions with the platforms `SHA256SUMS` lists (and which are uploaded), and for
 * admins a delete button per version.
 */
export function providersPage(input: ProvidersPageInput): Page {
  const { base, host, choice, providers, next, mayManage, now, problem } = input;
  const { namespace } = choice;
  return {
    ...(problem ? { status: problem.status } : {}),
    title: `Providers of ${namespace}`,
    section: 'registry',
    body: html`<h1>Registry</h1>
${registryHeader(base, 'providers', choice)}
${problemBox(problem)}
<section class="card" id="providers">
  <h2>Private providers of <code>${namespace}</code></h2>
  ${
    providers.length === 0
      ? html`<p id="no-providers">No private providers yet. An admin adds the release key on the <a href="${tabHref(base, 'gpg-keys', namespace)}">GPG keys</a> tab; then <code>trellis providers publish ./dist --namespace ${namespace} --type TYPE --version X.Y.Z</code>.</p>`
      : providers.map((provider) => providerCard({ base, host, namespace, provider, mayManage, now }))
  }
  ${
    next === null
      ? ''
      : html`<p class="pager"><a rel="next" data-older href="${tabHref(base, 'providers', namespace)}&amp;after=${encodeURIComponent(next)}">More providers →</a></p>`
  }
</section>`,
  };
}

function providerCard(input: {
  base: string;
  host: string;
  namespace: string;
  provider: ProviderEntry;
  mayManage: boolean;
  now: Date;
}): Html {
  const { base, host, namespace, provider, mayManage, now } = input;
  const source = `${host}/${namespace}/${provider.type}`;
  const versions = [...provider.versions].sort((a, b) => compareSemVer(b.version, a.version));
  const latest = latestVersion(versions.map((version) => version.version));
  return html`<article class="registry-provider" id="provider-${provider.type}">
  <h3>${provider.type}</h3>
  <div class="copy-line">
    <label for="source-${provider.type}">Source address</label>
    <input id="source-${provider.type}" class="code" readonly value="${source}">
    <button type="button" class="button" data-copy="${source}" aria-label="Copy the source address of ${provider.type}">Copy</button>
  </div>
  ${
    latest
      ? html`<pre class="snippet" data-provider-snippet><code>terraform {
  required_providers {
    ${provider.type} = {
      source  = "${source}"
      version = "${latest}"
    }
  }
}</code></pre>`
      : ''
  }
  ${
    versions.length === 0
      ? html`<p class="muted">No version is published.</p>`
      : html`<div class="table-scroll" role="region" aria-label="Provider versions" tabindex="0"><table class="provider-versions">
  <thead><tr><th>Version</th><th>Platforms</th><th>Protocols</th><th>Signed by key</th><th>Published</th>${mayManage ? html`<th><span class="visually-hidden">Delete</span></th>` : ''}</tr></thead>
  <tbody>${versions.map(
    (version) => html`<tr id="provider-${provider.type}-${version.version}" data-provider-version="${version.version}">
    <td>${version.version}</td>
    <td>${version.platforms.map(
      (platform) =>
        html`<span class="badge ${platform.uploaded ? 'tone-good' : 'tone-neutral'}" data-platform="${platform.os}_${platform.arch}" title="${platform.uploaded ? platform.filename : `${platform.filename}: listed in SHA256SUMS, not uploaded yet`}">${platform.os}/${platform.arch}${platform.uploaded ? '' : ' (not uploaded)'}</span> `,
    )}</td>
    <td>${version.protocols.join(', ')}</td>
    <td><code>${version.key_id}</code></td>
    <td>${when(version.created_at, now)}</td>
    ${mayManage ? html`<td>${deleteVersionForm(base, namespace, provider.type, version.version)}</td>` : ''}
  </tr>`,
  )}</tbody>
</table></div>`
  }
</article>`;
}

function deleteVersionForm(base: string, namespace: string, type: string, version: string): Html {
  const action = `${base}/registry/providers/${encodeURIComponent(namespace)}/${encodeURIComponent(type)}/${encodeURIComponent(version)}/delete`;
  return html`<form method="post" action="${action}" class="inline-form" data-delete-provider-version="${version}">
    <button type="submit" class="button danger" aria-label="Delete ${version} of ${type}">Delete ${version}</button>
  </form>`;
}

export interface GpgKeysPageInput {
  base: string;
  choice: RegistryNamespaceChoice;
  keys: readonly GpgKeyView[];
  /** The email of each person who added a key, by id (the namespace's members). */
  people: ReadonlyMap<string, string>;
  /** Whether the person may add and delete keys (`registry.manage`): the use case checks again. */
  mayManage: boolean;
  now: Date;
  problem?: FormProblem | null;
  /** What was typed in the key form, shown again after a refusal. */
  typed?: string;
}

/** A namespace's GPG public keys (issue 28): the list, and for admins the forms that add and delete one. */
export function gpgKeysPage(input: GpgKeysPageInput): Page {
  const { base, choice, keys, people, mayManage, now, problem } = input;
  const { namespace } = choice;
  const action = `${base}/registry/gpg-keys/${encodeURIComponent(namespace)}`;
  // A refused key is said above its form (to those who have it); anything else above the list.
  const addProblem = mayManage && input.typed !== undefined ? problem : null;
  return {
    ...(problem ? { status: problem.status } : {}),
    title: `GPG keys of ${namespace}`,
    section: 'registry',
    body: html`<h1>Registry</h1>
${registryHeader(base, 'gpg-keys', choice)}
${addProblem ? '' : problemBox(problem)}
<section class="card" id="gpg-keys">
  <h2>GPG keys of <code>${namespace}</code></h2>
  <p class="muted">A provider version is published only when its <code>SHA256SUMS</code> is signed by one of these keys; <code>tofu init</code> checks the signature against them too.</p>
  ${
    keys.length === 0
      ? html`<p id="no-gpg-keys">No keys yet: every provider version is refused until an admin adds one.</p>`
      : html`<div class="table-scroll" role="region" aria-label="GPG keys" tabindex="0"><table class="gpg-keys">
  <thead><tr><th>Key id</th><th>Added</th><th>By</th>${mayManage ? html`<th><span class="visually-hidden">Delete</span></th>` : ''}</tr></thead>
  <tbody>${keys.map(
    (key) => html`<tr id="gpg-key-${key.key_id}" data-gpg-key="${key.key_id}">
    <td><code>${key.key_id}</code></td>
    <td>${when(key.created_at, now)}</td>
    <td>${people.get(key.created_by) ?? html`<span class="muted">a former member</span>`}</td>
    ${
      mayManage
        ? html`<td><form method="post" action="${action}/${encodeURIComponent(key.key_id)}/delete" class="inline-form" data-delete-gpg-key="${key.key_id}">
      <button type="submit" class="button danger" aria-label="Delete key ${key.key_id}">Delete</button>
    </form></td>`
        : ''
    }
  </tr>`,
  )}</tbody>
</table></div>`
  }
  ${mayManage ? '' : html`<p class="muted small" data-read-only>The namespace's admins add and delete keys.</p>`}
</section>
${
  mayManage
    ? html`<section class="card" id="add-gpg-key">
  <h2>Add a key</h2>
  ${problemBox(addProblem)}
  <form method="post" action="${action}" class="stacked-form" data-add-gpg-key>
    <label for="gpg-key-armor">ASCII-armored public key (<code>gpg --armor --export KEYID</code>)</label>
    <textarea id="gpg-key-armor" name="ascii_armor" class="code" rows="10" required spellcheck="false" placeholder="-----BEGIN PGP PUBLIC KEY BLOCK-----">${input.typed ?? ''}</textarea>
    <p class="actions"><button type="submit" class="button primary">Add key</button></p>
  </form>
  <p class="muted small">Only the public half: a private key is refused. The key id is read from the key.</p>
</section>`
    : ''
}`,
  };
}
