import type {
  ModuleDescription,
  ModuleInput,
  ModuleOutput,
  ModuleRepositoryView,
  ModuleUsage,
  PageResult,
  RegistryModuleVersionView,
  RegistryModuleView,
} from '@trellis/core';
import { utc, when } from '../format.js';
import { type Html, html } from '../html.js';
import type { Page } from '../layout.js';
import { olderLink } from '../pages/olderLink.js';
import { type RegistryNamespaceChoice, registryHeader } from './registryNav.js';

export interface ModuleListPageInput {
  base: string;
  /** The namespace shown, and the person's namespaces to choose from. */
  choice: RegistryNamespaceChoice;
  modules: PageResult<RegistryModuleView>;
  now: Date;
}

/** A namespace's modules, newest first, under the registry's tabs and the namespace chooser. */
export function moduleListPage(input: ModuleListPageInput): Page {
  const { base, choice, modules, now } = input;
  const { namespace } = choice;
  return {
    title: 'Module registry',
    section: 'registry',
    body: html`<h1>Registry</h1>
${registryHeader(base, 'modules', choice)}
<section class="card">
  <h2>Modules of <code>${namespace}</code></h2>
  ${
    modules.items.length === 0
      ? html`<p id="no-modules">No modules yet. Publish one with <code>trellis modules publish</code>, or connect a repository whose version tags publish (<code>trellis modules connect</code>).</p>`
      : html`<div class="table-scroll" role="region" aria-label="Modules" tabindex="0"><table class="modules">
  <thead><tr><th>Module</th><th>Latest version</th><th>Updated</th></tr></thead>
  <tbody>${modules.items.map(
    (module) => html`<tr id="module-${module.name}-${module.system}">
    <td><a href="${base}/registry/${module.namespace}/${module.name}/${module.system}">${module.name}/${module.system}</a></td>
    <td>${module.latest_version ?? html`<span class="muted">none</span>`}</td>
    <td>${when(module.updated_at, now)}</td>
  </tr>`,
  )}</tbody>
</table></div>`
  }
  ${olderLink(`${base}/registry`, modules, { namespace })}
</section>`,
  };
}

export interface ModulePageInput {
  base: string;
  /** This server's host, for the module source people copy. */
  host: string;
  module: RegistryModuleView;
  versions: readonly RegistryModuleVersionView[];
  /** The version whose documentation is shown (asked, else the latest). */
  shown: RegistryModuleVersionView | null;
  description: ModuleDescription | null;
  /** Why the documentation could not be read, if it could not. */
  problem: string | null;
  repository: ModuleRepositoryView | null;
  /** The vines whose last plan or deploy installed it. */
  usage: ModuleUsage;
  now: Date;
}

/** One module: how to use it, its versions, and the README, inputs and outputs of one version. */
export function modulePage(input: ModulePageInput): Page {
  const { base, host, module, versions, shown, description, problem, repository, usage, now } = input;
  const path = `${base}/registry/${module.namespace}/${module.name}/${module.system}`;
  const source = `${host}/${module.namespace}/${module.name}/${module.system}`;
  return {
    title: `${module.namespace}/${module.name}/${module.system}`,
    section: 'registry',
    body: html`<p><a href="${base}/registry?namespace=${encodeURIComponent(module.namespace)}">Registry</a> / ${module.namespace}</p>
<h1 id="module-title">${module.name}/${module.system}</h1>
${
  shown
    ? html`<section class="card" id="module-usage">
  <h2>Use it</h2>
  <pre><code>module "${module.name}" {
  source  = "${source}"
  version = "${shown.version}"
}</code></pre>
</section>`
    : ''
}
<section class="card" id="module-versions">
  <h2>Versions</h2>
  ${
    versions.length === 0
      ? html`<p>No version is published.</p>`
      : html`<div class="table-scroll" role="region" aria-label="Versions" tabindex="0"><table class="versions">
  <thead><tr><th>Version</th><th>Published</th><th>Size</th><th></th></tr></thead>
  <tbody>${versions.map((version) => versionRow(path, version, shown, now))}</tbody>
</table></div>`
  }
</section>
${usedBy(base, usage, now)}
${repository ? repositoryCard(repository) : ''}
${shown ? documentation(shown, description, problem) : ''}`,
  };
}

function versionRow(
  path: string,
  version: RegistryModuleVersionView,
  shown: RegistryModuleVersionView | null,
  now: Date,
): Html {
  const current = shown?.id === version.id;
  return html`<tr id="version-${version.version}"${current ? html` class="current"` : ''}>
    <td><a href="${path}?version=${encodeURIComponent(version.version)}">${version.version}</a>${current ? html` <span class="muted">(shown)</span>` : ''}</td>
    <td>${when(version.published_at, now)}</td>
    <td>${String(version.size)} bytes</td>
    <td>${version.deprecated ? html`<span class="badge warning" title="${version.deprecation_reason ?? ''}">deprecated</span>${version.deprecation_reason ? html` ${version.deprecation_reason}` : ''}` : ''}</td>
  </tr>`;
}

function usedBy(base: string, usage: ModuleUsage, now: Date): Html {
  return html`<section class="card" id="module-used-by">
  <h2>Used by</h2>
  ${
    usage.vines.length === 0
      ? html`<p id="no-usage">No vine's last plan or deploy installed this module.</p>`
      : html`<div class="table-scroll" role="region" aria-label="Used by" tabindex="0"><table class="used-by">
  <thead><tr><th>Vine</th><th>Version</th><th>From</th></tr></thead>
  <tbody>${usage.vines.map(
    (used) => html`<tr data-used-by="${used.vine_id}">
    <td><a href="${base}/configurations/${used.vine_id}">${used.vine_name}</a></td>
    <td>${used.version}</td>
    <td><a href="${base}/jobs/${used.job_id}">${used.job_type === 'PLAN' ? 'plan' : 'deploy'}</a>${used.finished_at ? html`, ${when(used.finished_at, now)}` : ''}</td>
  </tr>`,
  )}</tbody>
</table></div>`
  }
  <p class="muted">From each vine's last succeeded plan or deploy (a pull request's plan is passed over).</p>
</section>`;
}

function repositoryCard(repository: ModuleRepositoryView): Html {
  const last = repository.last_tag;
  return html`<section class="card" id="module-repository">
  <h2>Published from git tags</h2>
  <p><code>${repository.repository}</code> on ${repository.provider}: a tag <code>v1.2.0</code> publishes version <code>1.2.0</code>.${
    repository.status === 'needs_reconnect'
      ? html` <strong class="error">Needs reconnecting: the person who connected it is no longer an admin.</strong>`
      : ''
  }</p>
  ${
    last
      ? html`<p id="last-tag">Last tag <code>${last.tag}</code> (<code>${last.commit_sha.slice(0, 12)}</code>), ${utc(last.at)}: <strong>${last.outcome}</strong>${last.message ? html` — ${last.message}` : ''}</p>`
      : html`<p class="muted">No tag pushed since it was connected.</p>`
  }
</section>`;
}

function documentation(
  shown: RegistryModuleVersionView,
  description: ModuleDescription | null,
  problem: string | null,
): Html {
  if (description === null) {
    return html`<section class="card"><p class="error">The files of ${shown.version} could not be read: ${problem ?? ''}</p></section>`;
  }
  return html`<section class="card" id="module-inputs">
  <h2>Inputs of ${shown.version}</h2>
  ${
    description.inputs.length === 0
      ? html`<p>This module takes no inputs.</p>`
      : html`<div class="table-scroll" role="region" aria-label="Inputs" tabindex="0"><table class="inputs">
  <thead><tr><th>Name</th><th>Type</th><th>Default</th><th>Description</th></tr></thead>
  <tbody>${description.inputs.map(inputRow)}</tbody>
</table></div>`
  }
</section>
<section class="card" id="module-outputs">
  <h2>Outputs of ${shown.version}</h2>
  ${
    description.outputs.length === 0
      ? html`<p>This module has no outputs.</p>`
      : html`<div class="table-scroll" role="region" aria-label="Outputs" tabindex="0"><table class="outputs">
  <thead><tr><th>Name</th><th>Description</th></tr></thead>
  <tbody>${description.outputs.map(outputRow)}</tbody>
</table></div>`
  }
</section>
${
  description.problems.length > 0
    ? html`<section class="card"><p class="muted">Not read: ${description.problems.map((p) => html`<code>${p.path}</code> (${p.message}) `)}</p></section>`
    : ''
}
<section class="card" id="module-readme">
  <h2>README</h2>
  ${description.readme === null ? html`<p class="muted">This version has no README.</p>` : html`<pre class="readme">${description.readme}</pre>`}
</section>`;
}

function inputRow(input: ModuleInput): Html {
  let fallback: Html | string;
  if (input.required) fallback = html`<strong>required</strong>`;
  else if (input.sensitive) fallback = html`<span class="muted">(sensitive)</span>`;
  else fallback = html`<code>${input.default ?? ''}</code>`;
  return html`<tr id="input-${input.name}">
    <td><code>${input.name}</code>${input.sensitive ? html` <span class="badge">sensitive</span>` : ''}</td>
    <td>${input.type === null ? html`<span class="muted">any</span>` : html`<code>${input.type}</code>`}</td>
    <td>${fallback}</td>
    <td>${input.description ?? ''}</td>
  </tr>`;
}

function outputRow(output: ModuleOutput): Html {
  return html`<tr id="output-${output.name}">
    <td><code>${output.name}</code>${output.sensitive ? html` <span class="badge">sensitive</span>` : ''}</td>
    <td>${output.description ?? ''}</td>
  </tr>`;
}
