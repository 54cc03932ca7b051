import type { MirrorArchiveView, PageResult } from '@trellis/core';
import { when } from '../format.js';
import { html } from '../html.js';
import type { Page } from '../layout.js';
import type { FormProblem } from '../orgs/orgPages.js';
import { olderLink } from '../pages/olderLink.js';
import { byteSize, problemBox, type RegistryNamespaceChoice, registryHeader, shortHash } from './registryNav.js';

export interface MirrorPageInput {
  base: string;
  /** This server's host: the mirror's URL is `https://<host>/api/registry/mirror/<namespace>/`. */
  host: string;
  choice: RegistryNamespaceChoice;
  archives: PageResult<MirrorArchiveView>;
  /** The email of each person who pushed an archive, by id (the namespace's members). */
  people: ReadonlyMap<string, string>;
  /** Whether the person may delete archives (`registry.manage`): the use case checks again. */
  mayManage: boolean;
  now: Date;
  problem?: FormProblem | null;
}

/**
 * A namespace's provider network mirror (issue 28): the CLI configuration that uses it, and its
 * archives a page at a time, newest first, as the API lists them; admins delete one.
 */
export function mirrorPage(input: MirrorPageInput): Page {
  const { base, host, choice, archives, people, mayManage, now, problem } = input;
  const { namespace } = choice;
  const url = `https://${host}/api/registry/mirror/${namespace}/`;
  const action = `${base}/registry/mirror/${encodeURIComponent(namespace)}`;
  return {
    ...(problem ? { status: problem.status } : {}),
    title: `Provider mirror of ${namespace}`,
    section: 'registry',
    body: html`<h1>Registry</h1>
${registryHeader(base, 'mirror', choice)}
${problemBox(problem)}
<section class="card" id="mirror-config">
  <h2>Use the mirror</h2>
  <p>In a CLI configuration (<code>~/.tofurc</code>, or the file <code>TF_CLI_CONFIG_FILE</code> names), with a token that may read <code>${namespace}</code> (<code>tofu login ${host}</code>, or an API token):</p>
  <pre class="snippet" data-mirror-snippet><code>provider_installation {
  network_mirror {
    url = "${url}"
  }
}</code></pre>
  <p class="muted small">Fill it with <code>tofu providers mirror ./providers</code> where the internet is reachable, then <code>trellis mirror push ./providers --namespace ${namespace}</code>.</p>
</section>
<section class="card" id="mirror-archives">
  <h2>Archives of <code>${namespace}</code></h2>
  ${
    archives.items.length === 0
      ? html`<p id="no-mirror-archives">The mirror holds no archive yet.</p>`
      : html`<div class="table-scroll" role="region" aria-label="Mirrored archives" tabindex="0"><table class="mirror-archives">
  <thead><tr><th>Provider</th><th>Version</th><th>Platform</th><th>Size</th><th>Hashes</th><th>From</th><th>Added</th>${mayManage ? html`<th><span class="visually-hidden">Delete</span></th>` : ''}</tr></thead>
  <tbody>${archives.items.map(
    (archive) => html`<tr id="mirror-archive-${archive.id}" data-mirror-archive="${archive.id}">
    <td><code>${archive.provider}</code></td>
    <td>${archive.version}</td>
    <td>${archive.platform}</td>
    <td>${byteSize(archive.size)}</td>
    <td>${archive.hashes.map((hash) => html`${shortHash(hash)} `)}</td>
    <td data-archive-origin="${archive.origin}">${
      archive.origin === 'pulled'
        ? html`pulled from <code>${archive.provider.split('/')[0]}</code>`
        : html`pushed by ${archive.created_by === null ? html`<span class="muted">the system</span>` : (people.get(archive.created_by) ?? html`<span class="muted">a former member</span>`)}`
    }</td>
    <td>${when(archive.created_at, now)}</td>
    ${
      mayManage
        ? html`<td><form method="post" action="${action}/${archive.id}/delete" class="inline-form" data-delete-mirror-archive="${archive.id}">
      <button type="submit" class="button danger" aria-label="Delete ${archive.provider} ${archive.version} ${archive.platform}">Delete</button>
    </form></td>`
        : ''
    }
  </tr>`,
  )}</tbody>
</table></div>`
  }
  ${olderLink(`${base}/registry/mirror`, archives, { namespace })}
</section>`,
  };
}
