import { z } from 'zod';
import type { AuthKind, Operation } from '@trellis/contract';

const SECURITY: Record<AuthKind, Record<string, string[]>[]> = {
  none: [],
  user: [{ cliBearer: [] }, { webSession: [] }],
  session: [{ webSession: [] }],
  worker: [{ workerId: [], workerToken: [] }],
  state: [{ workerId: [], workerToken: [] }, { jobStateToken: [] }],
  release: [{ releaseSecret: [] }],
};

const PROBLEM_SCHEMA = {
  type: 'object',
  required: ['type', 'title', 'status', 'detail', 'code'],
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    code: { type: 'string', description: 'Stable snake_case error code' },
    errors: {
      type: 'array',
      items: { type: 'object', properties: { path: { type: 'string' }, message: { type: 'string' } } },
    },
    failed_policies: {
      type: 'array',
      description: '`policy_failed`: each failed mandatory policy of the plan, with its deny messages',
      items: {
        type: 'object',
        properties: {
          policy_id: { type: 'string' },
          version: { type: 'integer' },
          name: { type: 'string' },
          messages: { type: 'array', items: { type: 'string' } },
        },
      },
    },
    expected_seq: { type: 'integer', description: "`log_seq_gap`: the next `seq` the job's log expects" },
    request_id: { type: 'string' },
  },
};

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  return rest;
}

function parameters(route: Operation): unknown[] {
  const out: unknown[] = [];
  for (const [location, schema] of [
    ['path', route.params],
    ['query', route.query],
  ] as const) {
    if (!schema) continue;
    const json = jsonSchema(schema, 'input') as { properties?: Record<string, unknown>; required?: string[] };
    for (const [name, property] of Object.entries(json.properties ?? {})) {
      out.push({
        name,
        in: location,
        required: location === 'path' || (json.required ?? []).includes(name),
        schema: property,
      });
    }
  }
  return out;
}

/** The OpenAPI 3.1 document of the routes, from the same schemas that validate requests. */
export function buildOpenApiDocument(routes: Operation[], info: { title: string; version: string }): object {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const responses: Record<string, unknown> = {};
    for (const [status, spec] of Object.entries(route.responses)) {
      responses[status] = {
        description: spec.description,
        ...(spec.headers
          ? {
              headers: Object.fromEntries(
                Object.entries(spec.headers).map(([name, header]) => [
                  name,
                  { description: header.description, schema: { type: 'string' } },
                ]),
              ),
            }
          : {}),
        ...(spec.schema || spec.contentType
          ? {
              content: {
                [spec.contentType ?? 'application/json']: spec.schema
                  ? { schema: jsonSchema(spec.schema, 'output') }
                  : { schema: { type: 'string', format: 'binary' } },
              },
            }
          : {}),
      };
    }
    responses.default = {
      description: 'An error (RFC 9457 problem details)',
      content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
    };
    const body =
      route.body === 'binary'
        ? {
            required: true,
            content: {
              'application/octet-stream': { schema: { type: 'string', format: 'binary' } },
              'multipart/form-data': {
                schema: { type: 'object', properties: { file: { type: 'string', format: 'binary' } } },
              },
            },
          }
        : route.body === 'raw'
          ? {
              required: true,
              content: {
                'application/json': {
                  schema: { type: 'object', description: "the provider's event payload, verified over its raw bytes" },
                },
              },
            }
          : route.body
            ? { required: true, content: { 'application/json': { schema: jsonSchema(route.body, 'input') } } }
            : undefined;
    paths[route.path] ??= {};
    // OpenAPI has no LOCK/UNLOCK operations: they are documented as `x-lock` / `x-unlock`.
    const method = route.method === 'lock' || route.method === 'unlock' ? `x-${route.method}` : route.method;
    (paths[route.path] as Record<string, unknown>)[method] = {
      operationId: route.operationId,
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      tags: route.tags,
      security: SECURITY[route.auth],
      parameters: parameters(route),
      ...(body ? { requestBody: body } : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: { ...info, license: { name: 'Apache-2.0', identifier: 'Apache-2.0' } },
    paths,
    components: {
      schemas: { Problem: PROBLEM_SCHEMA },
      securitySchemes: {
        cliBearer: {
          type: 'http',
          scheme: 'bearer',
          description: 'a CLI access token (a JWT), or an API token (`trt_…`, see POST /api/tokens)',
        },
        webSession: { type: 'apiKey', in: 'cookie', name: 'trellis_session', description: 'Web session cookie' },
        workerId: { type: 'apiKey', in: 'header', name: 'X-Worker-ID' },
        workerToken: { type: 'apiKey', in: 'header', name: 'X-Worker-Token' },
        jobStateToken: {
          type: 'http',
          scheme: 'basic',
          description:
            "Basic auth as the engine's http backend sends it: the worker id, and the job's state_token from the claim",
        },
        releaseSecret: { type: 'http', scheme: 'bearer', description: 'RELEASE_API_SECRET (CI only)' },
      },
    },
  };
}
