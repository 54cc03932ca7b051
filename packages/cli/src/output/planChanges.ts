import {
  type AttributeChange,
  CHANGE_KIND_WORDS,
  changeKind,
  changeMark,
  changesByModule,
  type PlanChanges,
  planValueText,
} from '@trellis/core';

interface Styles {
  bold(text: string): string;
  dim(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  red(text: string): string;
}

function colourOf(mark: string, style: Styles): (text: string) => string {
  if (mark === '+') return style.green;
  if (mark === '-') return style.red;
  if (mark === '~') return style.yellow;
  return style.yellow;
}

/** `+` set, `-` removed, `~` changed: one attribute, values masked as the agent masked them. */
function attributeLine(change: AttributeChange, indent: string, style: Styles): string {
  const mark = change.before === undefined ? '+' : change.after === undefined ? '-' : '~';
  const path = change.path === '' ? '(all attributes)' : change.path;
  const value =
    mark === '+'
      ? planValueText(change.after)
      : mark === '-'
        ? `${planValueText(change.before)} -> null`
        : `${planValueText(change.before)} -> ${planValueText(change.after)}`;
  const forces = change.forces_replacement ? style.red(' # forces replacement') : '';
  return `${indent}${colourOf(mark, style)(mark)} ${path} = ${value}${forces}`;
}

function moreLines(omitted: number, unchanged: number, indent: string, style: Styles): string[] {
  const lines: string[] = [];
  if (omitted > 0) lines.push(style.dim(`${indent}... ${omitted} more changed attribute(s) omitted`));
  if (unchanged > 0) lines.push(style.dim(`${indent}(${unchanged} unchanged attribute(s) hidden)`));
  return lines;
}

/**
 * `trellis jobs changes`: the change tree by module, each resource with the engine's mark
 * (`+ ~ -/+ -`) and its attribute diff, then the outputs; sensitive values read `(sensitive)`,
 * unknown ones `(known after apply)`, and what the size limit left out is said.
 */
export function renderPlanChanges(document: PlanChanges, style: Styles): string {
  const counts = { create: 0, update: 0, replace: 0, delete: 0 };
  for (const change of document.resource_changes) {
    const kind = changeKind(change.actions);
    if (kind in counts) counts[kind as keyof typeof counts] += 1;
  }
  const lines: string[] = [
    style.bold(
      `${counts.create} to create, ${counts.update} to update, ${counts.replace} to replace, ${counts.delete} to destroy`,
    ),
  ];
  if (document.resource_changes.length === 0 && document.resource_changes_omitted === 0) {
    lines.push('No resource changes.');
  }
  for (const group of changesByModule(document.resource_changes)) {
    const indent = '  '.repeat(group.depth);
    lines.push('');
    lines.push(style.bold(`${indent}${group.module_address ?? 'root module'}`));
    for (const change of group.resources) {
      const mark = changeMark(change.actions);
      const word = CHANGE_KIND_WORDS[changeKind(change.actions)];
      const reason = change.action_reason ? `, ${change.action_reason}` : '';
      lines.push(
        `${indent}  ${colourOf(mark, style)(mark.padEnd(3))} ${change.address} ${style.dim(`(${word}${reason})`)}`,
      );
      for (const attribute of change.attributes) lines.push(attributeLine(attribute, `${indent}        `, style));
      lines.push(...moreLines(change.attributes_omitted, change.unchanged_attributes, `${indent}        `, style));
    }
  }
  if (document.resource_changes_omitted > 0) {
    lines.push('', style.dim(`... ${document.resource_changes_omitted} more changed resource(s) omitted (size limit)`));
  }
  if (document.output_changes.length > 0 || document.output_changes_omitted > 0) {
    lines.push('', style.bold('Outputs'));
    for (const output of document.output_changes) {
      const mark = changeMark(output.actions);
      lines.push(`  ${colourOf(mark, style)(mark.padEnd(3))} ${output.name}`);
      for (const attribute of output.attributes) lines.push(attributeLine(attribute, '        ', style));
      lines.push(...moreLines(output.attributes_omitted, 0, '        ', style));
    }
    if (document.output_changes_omitted > 0) {
      lines.push(style.dim(`  ... ${document.output_changes_omitted} more changed output(s) omitted (size limit)`));
    }
  }
  return lines.join('\n');
}
