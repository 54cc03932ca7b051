/** How long a variable's value may be where people read it (CLI tables, web pages); the API has it all. */
export const DISPLAY_VALUE_CHARS = 80;

/**
 * A long value cut for reading, with how much was left out: `abc… (+1,234 characters)`. One
 * line: a multi-line value shows its first line and says there are more.
 */
export function shortenForDisplay(value: string, max = DISPLAY_VALUE_CHARS): string {
  const newline = value.indexOf('\n');
  const cut = Math.min(max, newline < 0 ? value.length : newline);
  if (cut >= value.length) return value;
  const rest = value.length - cut;
  return `${value.slice(0, cut)}… (+${rest.toLocaleString('en-US')} characters)`;
}
