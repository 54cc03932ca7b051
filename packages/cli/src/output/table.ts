// biome-ignore lint/suspicious/noControlCharactersInRegex: matching ANSI escape sequences is the point
const ANSI = /\u001b\[[0-9;]*m/g;

/** The width a string takes on screen, ignoring colour codes. */
export function visibleWidth(text: string): number {
  return [...text.replace(ANSI, '')].length;
}

/**
 * Rows as aligned columns with a header, like `gh` and `kubectl`. Cells may carry colour; the
 * last column is never padded, so lines have no trailing spaces.
 */
export function renderTable(header: string[], rows: string[][], style: (heading: string) => string = (h) => h): string {
  const widths = header.map((heading, column) =>
    Math.max(visibleWidth(heading), ...rows.map((row) => visibleWidth(row[column] ?? ''))),
  );
  const line = (cells: string[], decorate: (cell: string) => string = (c) => c) =>
    cells
      .map((cell, column) => {
        const last = column === cells.length - 1;
        const padded = last ? cell : cell + ' '.repeat((widths[column] ?? 0) - visibleWidth(cell));
        return decorate(padded);
      })
      .join('  ')
      .trimEnd();
  return [line(header, style), ...rows.map((row) => line(row))].join('\n');
}

/** `key: value` lines with the keys aligned; empty values are shown as `-`. */
export function renderFields(fields: [string, string | null | undefined][], style: (key: string) => string = (k) => k) {
  const width = Math.max(...fields.map(([key]) => key.length));
  return fields
    .map(
      ([key, value]) =>
        `${style(`${key}:`.padEnd(width + 1))}  ${value === null || value === undefined || value === '' ? '-' : value}`,
    )
    .join('\n');
}
