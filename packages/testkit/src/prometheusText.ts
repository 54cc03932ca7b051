/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4), for tests that scrape
 * `/metrics`: every line must be a `# HELP`, a `# TYPE` or a sample of a declared family, label
 * values quoted and escaped; anything else throws, so a malformed exposition fails the test.
 */
export interface PrometheusSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface PrometheusFamily {
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  help: string;
  samples: PrometheusSample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);
/** Suffixes a histogram's or summary's samples add to the family name. */
const SUFFIXES = ['_bucket', '_sum', '_count'];

export function parsePrometheusText(text: string): Map<string, PrometheusFamily> {
  const families = new Map<string, PrometheusFamily>();
  const lines = text.split('\n');
  if (lines.at(-1) !== '') throw new Error('the exposition must end with a newline');
  lines.forEach((line, index) => {
    if (line === '') return;
    const where = `line ${index + 1}: ${line}`;
    if (line.startsWith('# HELP ')) {
      const [name, ...help] = line.slice('# HELP '.length).split(' ');
      if (!name || !NAME.test(name)) throw new Error(`bad metric name, ${where}`);
      familyOf(families, name).help = help.join(' ');
      return;
    }
    if (line.startsWith('# TYPE ')) {
      const [name, type, ...rest] = line.slice('# TYPE '.length).split(' ');
      if (!name || !NAME.test(name) || !type || !TYPES.has(type) || rest.length > 0)
        throw new Error(`bad TYPE, ${where}`);
      const family = familyOf(families, name);
      if (family.samples.length > 0) throw new Error(`TYPE after samples, ${where}`);
      family.type = type as PrometheusFamily['type'];
      return;
    }
    if (line.startsWith('#')) return;
    const sample = parseSample(line, where);
    const family = families.get(sample.name) ?? familyOfSample(families, sample.name);
    if (family === undefined) throw new Error(`sample of an undeclared family, ${where}`);
    family.samples.push(sample);
  });
  return families;
}

function familyOf(families: Map<string, PrometheusFamily>, name: string): PrometheusFamily {
  let family = families.get(name);
  if (!family) {
    family = { name, type: 'untyped', help: '', samples: [] };
    families.set(name, family);
  }
  return family;
}

function familyOfSample(families: Map<string, PrometheusFamily>, name: string): PrometheusFamily | undefined {
  for (const suffix of SUFFIXES) {
    if (!name.endsWith(suffix)) continue;
    const family = families.get(name.slice(0, -suffix.length));
    if (family && (family.type === 'histogram' || family.type === 'summary')) return family;
  }
  return undefined;
}

function parseSample(line: string, where: string): PrometheusSample {
  const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)( -?\d+)?$/.exec(line);
  if (!match) throw new Error(`bad sample, ${where}`);
  const [, name, labelText, valueText] = match as unknown as [string, string, string | undefined, string];
  const value = parseValue(valueText);
  if (value === null) throw new Error(`bad value, ${where}`);
  return { name, labels: labelText ? parseLabels(labelText.slice(1, -1), where) : {}, value };
}

/** As Prometheus reads a value (Go's `ParseFloat`): `NaN` and `Inf` in any case, with a sign. */
function parseValue(text: string): number | null {
  const lower = text.toLowerCase();
  if (lower === 'nan') return Number.NaN;
  if (/^[+]?inf(inity)?$/.test(lower)) return Number.POSITIVE_INFINITY;
  if (/^-inf(inity)?$/.test(lower)) return Number.NEGATIVE_INFINITY;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/.test(lower)) return null;
  return Number(text);
}

function parseLabels(text: string, where: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let rest = text;
  while (rest.length > 0) {
    const match = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)/.exec(rest);
    if (!match) throw new Error(`bad labels, ${where}`);
    const [whole, label, raw] = match as unknown as [string, string, string];
    if (label in labels) throw new Error(`label ${label} twice, ${where}`);
    labels[label] = raw.replace(/\\(["\\n])/g, (_, c: string) => (c === 'n' ? '\n' : c));
    rest = rest.slice(whole.length);
  }
  return labels;
}

/** The value of the one sample of `name` whose labels include `labels`; throws when not exactly one. */
export function sampleValue(
  families: Map<string, PrometheusFamily>,
  name: string,
  labels: Record<string, string> = {},
): number {
  const found = [...families.values()]
    .flatMap((family) => family.samples)
    .filter((sample) => sample.name === name && Object.entries(labels).every(([k, v]) => sample.labels[k] === v));
  if (found.length !== 1)
    throw new Error(`expected one sample ${name} ${JSON.stringify(labels)}, found ${found.length}`);
  return (found[0] as PrometheusSample).value;
}
