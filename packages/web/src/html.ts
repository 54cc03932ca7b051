/**
 * HTML built from tagged templates that escape every interpolation unless it is already `Html`.
 * Pages never concatenate strings into markup; the only way to insert raw markup is to nest
 * another `html` template.
 */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/** What a template accepts: text (escaped), numbers, nested Html, lists of those, or nothing. */
export type Renderable = Html | string | number | boolean | null | undefined | readonly Renderable[];

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (char) => ESCAPES[char] as string);
}

function render(value: Renderable): string {
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false || value === true) return '';
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Renderable[]): Html {
  let out = strings[0] ?? '';
  values.forEach((value, index) => {
    out += render(value) + (strings[index + 1] ?? '');
  });
  return new Html(out);
}

/**
 * A URL fit for an `href` that points away from Trellis (an Argo CD link, a cluster endpoint,
 * values an agent reported): only http(s), so a `javascript:` URL can never become a link.
 */
export function externalUrl(value: unknown): string | null {
  if (typeof value !== 'string' || !URL.canParse(value)) return null;
  const url = new URL(value);
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
}
