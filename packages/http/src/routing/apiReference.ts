import { operations } from '@trellis/contract';
import { LEGACY_SECOND_STATUS, PROBLEM_CODES } from '@trellis/core';
import { buildOpenApiDocument } from './openapi.js';

const API_VERSION = '0.1.0';

/** The OpenAPI document of every operation of the contract (the server serves the modules it runs). */
export function apiOpenApiDocument(): object {
  return buildOpenApiDocument(Object.values(operations), { title: 'Trellis API', version: API_VERSION });
}

interface Operation {
  operationId: string;
  summary: string;
  description?: string;
  security: Record<string, string[]>[];
  parameters: { name: string; in: string; required: boolean }[];
  requestBody?: { content: Record<string, unknown> };
  responses: Record<string, { description: string }>;
}

const AUTH_NAMES: Record<string, string> = {
  cliBearer: 'CLI bearer token',
  webSession: 'web session',
  workerId: 'agent headers',
  jobStateToken: 'job state token',
  releaseSecret: 'release secret',
};

/** A readable reference of every operation, for docs/api.md. */
export function renderApiMarkdown(doc: object): string {
  const { paths } = doc as { paths: Record<string, Record<string, Operation>> };
  const lines = [
    '# Trellis API reference',
    '',
    'Generated from the OpenAPI 3.1 document (`docs/openapi.json`, also served at `GET /api/openapi.json`)',
    'by `npm run docs:api`. Errors are RFC 9457 `application/problem+json` with a stable `code`.',
    'A `validation_failed` problem says each refused field in words in its `detail`',
    '(`drift_detection.interval_minutes must be at least 60 minutes`), and lists them in `errors`:',
    'each a `path` (`body.…`, `query.…` or `path.…` for what the request carried) and a `message`.',
    '',
    '| method | path | who | summary |',
    '|---|---|---|---|',
  ];
  const sections: string[] = [];
  for (const [path, methods] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const who =
        op.security.length === 0
          ? 'anyone'
          : [
              ...new Set(
                op.security.flatMap((s) =>
                  Object.keys(s)
                    .map((k) => AUTH_NAMES[k])
                    .filter(Boolean),
                ),
              ),
            ].join(' or ');
      lines.push(`| ${method.toUpperCase()} | \`${path}\` | ${who} | ${op.summary} |`);
      const params = op.parameters.map((p) => `\`${p.name}\` (${p.in}${p.required ? ', required' : ''})`);
      sections.push(
        [
          `### ${method.toUpperCase()} ${path}`,
          '',
          op.summary + '.',
          ...(op.description ? ['', op.description] : []),
          '',
          `- Who: ${who}`,
          ...(params.length > 0 ? [`- Parameters: ${params.join(', ')}`] : []),
          ...(op.requestBody ? [`- Body: ${Object.keys(op.requestBody.content).join(' or ')}`] : []),
          `- Responses: ${Object.entries(op.responses)
            .filter(([status]) => status !== 'default')
            .map(([status, r]) => `${status} ${r.description}`)
            .join('; ')}`,
          '',
        ].join('\n'),
      );
    }
  }
  return `${[...lines, '', ...problemCodeLines(), '', '## Operations', '', ...sections].join('\n').trimEnd()}\n`;
}

/** Every problem code of core's registry, by status, for docs/api.md. */
function problemCodeLines(): string[] {
  const registered: Record<string, { status: number; meaning: string }> = PROBLEM_CODES;
  const rows = Object.entries(registered)
    .map(([code, { status, meaning }]) => ({ code, status, meaning }))
    .concat(
      Object.entries(LEGACY_SECOND_STATUS).map(([code, second]) => ({
        code,
        status: second?.status ?? 0,
        meaning: `${second?.meaning} (published before the registry; kept)`,
      })),
    )
    .sort((a, b) => a.status - b.status || a.code.localeCompare(b.code));
  return [
    '## Problem codes',
    '',
    'Every `code` a problem can carry, with its status. A code is never removed nor given another',
    'meaning; the few marked "kept" had a second status before this list existed.',
    '',
    '| code | status | meaning |',
    '|---|---|---|',
    ...rows.map(({ code, status, meaning }) => `| \`${code}\` | ${status} | ${meaning.replaceAll('|', '\\|')} |`),
  ];
}
