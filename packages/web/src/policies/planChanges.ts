import {
  type AttributeChange,
  CHANGE_KIND_WORDS,
  changeKind,
  changeMark,
  changesByModule,
  type ModuleChanges,
  moduleLineage,
  type PlanChangesView,
  type PlannedOutputChange,
  type PlannedResourceChange,
  type PlanValue,
  planValueText,
} from '@trellis/core';
import { type Html, html } from '../html.js';

/** A side of an attribute's change: the value, or the mask the agent put in its place. */
function valueHtml(value: PlanValue | undefined): Html {
  if (value === undefined) return html`<span class="muted">null</span>`;
  if ('sensitive' in value) return html`<em class="masked" data-sensitive>(sensitive)</em>`;
  if ('unknown' in value) return html`<em class="masked" data-unknown>(known after apply)</em>`;
  return html`<code>${planValueText(value)}</code>`;
}

function attributeItem(change: AttributeChange): Html {
  const kind = change.before === undefined ? 'added' : change.after === undefined ? 'removed' : 'changed';
  const mark = kind === 'added' ? '+' : kind === 'removed' ? '-' : '~';
  return html`<li class="attribute-change" data-attribute="${change.path}">
  <span class="diff-mark diff-${kind}" aria-label="${kind}">${mark}</span>
  <code class="attribute-path">${change.path === '' ? '(all attributes)' : change.path}</code>
  ${kind === 'added' ? valueHtml(change.after) : html`${valueHtml(change.before)} <span aria-label="becomes">→</span> ${valueHtml(change.after)}`}${
    change.forces_replacement ? html` <span class="badge tone-bad">forces replacement</span>` : ''
  }
</li>`;
}

function attributeList(
  label: string,
  attributes: readonly AttributeChange[],
  omitted: number,
  unchanged: number,
): Html {
  return html`<ul class="attribute-diff" aria-label="${label}">
  ${attributes.map(attributeItem)}
  ${omitted > 0 ? html`<li class="muted">… ${String(omitted)} more changed attribute(s) omitted</li>` : ''}
  ${unchanged > 0 ? html`<li class="muted">${String(unchanged)} unchanged attribute(s) hidden</li>` : ''}
  ${attributes.length === 0 && omitted === 0 && unchanged === 0 ? html`<li class="muted">no attributes</li>` : ''}
</ul>`;
}

function changeSummary(actions: readonly string[], label: Html, reason?: string): Html {
  const kind = changeKind(actions);
  return html`<summary><span class="change-mark change-${kind}" aria-hidden="true">${changeMark(actions)}</span> ${label} <span class="change-word">${CHANGE_KIND_WORDS[kind]}${reason ? html` <span class="muted small">(${reason})</span>` : ''}</span></summary>`;
}

function resourceItem(change: PlannedResourceChange): Html {
  return html`<li data-resource-change="${change.address}" data-change-kind="${changeKind(change.actions)}">
  <details>
    ${changeSummary(change.actions, html`<code>${change.address}</code>`, change.action_reason)}
    ${attributeList(`Attribute changes of ${change.address}`, change.attributes, change.attributes_omitted, change.unchanged_attributes)}
  </details>
</li>`;
}

function outputItem(output: PlannedOutputChange): Html {
  return html`<li data-output-change="${output.name}" data-change-kind="${changeKind(output.actions)}">
  <details>
    ${changeSummary(output.actions, html`<code>output.${output.name}</code>`)}
    ${attributeList(`Changes of output ${output.name}`, output.attributes, output.attributes_omitted, 0)}
  </details>
</li>`;
}

/** A module and, nested under it, its child modules: the tree `changesByModule` lays out flat. */
function moduleItem(group: ModuleChanges, all: readonly ModuleChanges[]): Html {
  const children = all.filter((other) => {
    if (other.depth !== group.depth + 1) return false;
    if (group.module_address === null) return true;
    const lineage = moduleLineage(other.module_address ?? '');
    return lineage[lineage.length - 2] === group.module_address;
  });
  const name = group.module_address ?? 'root module';
  return html`<li class="module-changes" data-module="${group.module_address ?? ''}">
  <span class="module-name">${group.module_address ? html`<code>${name}</code>` : name}</span>
  ${group.resources.length > 0 ? html`<ul class="resource-changes">${group.resources.map(resourceItem)}</ul>` : ''}
  ${children.length > 0 ? html`<ul class="change-tree">${children.map((child) => moduleItem(child, all))}</ul>` : ''}
</li>`;
}

/**
 * A PLAN's changes (issue 29): the resources as a tree by module, each with the engine's mark
 * (create `+`, update `~`, replace `-/+`, destroy `-`) and its attribute diff in a `<details>`,
 * then the outputs. Values the plan marks sensitive never reached the control plane and read
 * `(sensitive)`; values known only after apply read `(known after apply)`. Long paths and values
 * wrap, so a phone never scrolls sideways.
 */
export function planChangesSection(document: PlanChangesView): Html {
  const counts = { create: 0, update: 0, replace: 0, delete: 0 };
  for (const change of document.resource_changes) {
    const kind = changeKind(change.actions);
    if (kind in counts) counts[kind as keyof typeof counts] += 1;
  }
  const groups = changesByModule(document.resource_changes);
  const roots = groups.filter(
    (group) => group.depth === 0 || (group.depth === 1 && !groups.some((g) => g.depth === 0)),
  );
  const omitted = document.resource_changes_omitted + document.output_changes_omitted;
  return html`<section class="card" id="plan-changes" data-plan-changes aria-labelledby="plan-changes-title">
  <h2 id="plan-changes-title">Changes</h2>
  <p class="change-counts" data-change-counts>
    <span class="change-mark change-create" aria-hidden="true">+</span> ${String(counts.create)} to create ·
    <span class="change-mark change-update" aria-hidden="true">~</span> ${String(counts.update)} to update ·
    <span class="change-mark change-replace" aria-hidden="true">-/+</span> ${String(counts.replace)} to replace ·
    <span class="change-mark change-delete" aria-hidden="true">-</span> ${String(counts.delete)} to destroy
  </p>
  ${
    document.resource_changes.length === 0 && document.resource_changes_omitted === 0
      ? html`<p class="muted" data-no-changes>No resource changes.</p>`
      : html`<ul class="change-tree" aria-label="Resource changes by module">${roots.map((group) => moduleItem(group, groups))}</ul>`
  }
  ${
    document.output_changes.length > 0
      ? html`<h3>Outputs</h3><ul class="resource-changes" aria-label="Output changes">${document.output_changes.map(outputItem)}</ul>`
      : ''
  }
  ${
    document.truncated
      ? html`<p class="notice" data-truncated>The plan is larger than the change document's limit: ${
          omitted > 0 ? `${omitted} more change(s) are left out` : 'some attributes or long values are cut'
        }. The engine's log has the whole plan.</p>`
      : ''
  }
  <p class="muted small">Values marked sensitive never leave the agent.</p>
</section>`;
}
