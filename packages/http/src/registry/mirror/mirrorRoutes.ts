import { TooLargeError, type UseCases, ValidationError } from '@trellis/core';
import {
  ListMirrorArchivesQuery,
  MirrorArchiveList,
  MirrorArchiveParams,
  MirrorArchiveRecord,
  MirrorNamespaceParams,
  PushMirrorArchiveParams,
} from '@trellis/contract';
import type { Request } from 'express';
import { PAGED_LIST_DESCRIPTION, PAGED_LIST_HEADERS, pagedList } from '../../routing/pagedList.js';
import { defineRoute, type RouteSpec } from '../../routing/route.js';

const ARCHIVE_TYPES = new Set(['application/zip', 'application/octet-stream']);

/** The pushed zip as it streams; a declared length over the limit is refused before a byte is read. */
function archiveBody(req: Request, maxBytes: number): AsyncIterable<Uint8Array> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (!ARCHIVE_TYPES.has(type)) {
    throw new ValidationError(
      'push the archive as application/zip (or application/octet-stream)',
      [{ path: 'content-type', message: 'must be application/zip or application/octet-stream' }],
      'unsupported_media_type',
    );
  }
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    throw new TooLargeError('mirror_archive_too_large', `the archive is larger than ${maxBytes} bytes`, maxBytes);
  }
  return req;
}

/**
 * Trellis's API of the provider network mirror (issue 28): push one archive at a time (what
 * `trellis mirror push` does for each zip `tofu providers mirror` wrote), list and delete. The
 * mirror itself, as `tofu` reads it, is `mirrorProtocol.ts`.
 */
export function mirrorRoutes(useCases: UseCases): RouteSpec[] {
  return [
    defineRoute({
      method: 'put',
      path: '/api/registry/mirror-archives/{namespace}/{hostname}/{provider_namespace}/{type}/{version}/{platform}',
      operationId: 'pushMirrorArchive',
      summary: "Push a provider archive into the namespace's provider mirror (streamed)",
      description:
        'The body is the zip `tofu providers mirror` wrote (`terraform-provider-<type>_<version>_<os>_<arch>.zip`), ' +
        'as `application/zip`. Needs the operator role. Its `h1:` and `zh:` hashes are computed by the server. ' +
        'An archive is immutable: the same bytes again answer `200` with the archive, other bytes `409 mirror_archive_exists`.',
      tags: ['registry'],
      auth: 'user',
      params: PushMirrorArchiveParams,
      body: 'binary',
      responses: {
        201: { description: 'Pushed', schema: MirrorArchiveRecord },
        200: { description: 'Already in the mirror with the same bytes', schema: MirrorArchiveRecord },
      },
      handler: async ({ user, params, req }) => {
        const { namespace, provider_namespace, ...address } = params;
        const pushed = await useCases.mirror.push(
          user,
          namespace,
          { ...address, namespace: provider_namespace },
          archiveBody(req, useCases.mirror.limits.maxArchiveBytes),
        );
        return { status: pushed.created ? 201 : 200, body: pushed.archive };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/registry/mirror-archives/{namespace}',
      operationId: 'listMirrorArchives',
      summary: "The archives of the namespace's provider mirror",
      description: PAGED_LIST_DESCRIPTION,
      tags: ['registry'],
      auth: 'user',
      params: MirrorNamespaceParams,
      query: ListMirrorArchivesQuery,
      responses: { 200: { description: 'A page of archives', schema: MirrorArchiveList, headers: PAGED_LIST_HEADERS } },
      handler: async ({ req, user, params, query }) =>
        pagedList(req, 'archives', await useCases.mirror.list(user, params.namespace, query)),
    }),
    defineRoute({
      method: 'delete',
      path: '/api/registry/mirror-archives/{namespace}/{id}',
      operationId: 'deleteMirrorArchive',
      summary: "Delete an archive from the namespace's provider mirror",
      description: 'Needs the admin role; recorded in the audit log.',
      tags: ['registry'],
      auth: 'user',
      params: MirrorArchiveParams,
      responses: { 204: { description: 'Deleted' } },
      handler: async ({ user, params }) => {
        await useCases.mirror.delete(user, params.namespace, params.id);
        return { status: 204 };
      },
    }),
  ];
}
