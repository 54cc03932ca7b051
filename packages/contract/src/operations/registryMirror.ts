/** The provider mirror: each operation as data (served by `http/src/registry/mirror/mirrorRoutes.ts`). */
import { operation } from '../operation.js';
import { PAGED_LIST_DESCRIPTION, PAGED_LIST_HEADERS } from '../paging.js';
import {
  ListMirrorArchivesQuery,
  MirrorArchiveList,
  MirrorArchiveParams,
  MirrorArchiveRecord,
  MirrorNamespaceParams,
  PushMirrorArchiveParams,
} from '../schemas.js';

export const pushMirrorArchive = operation({
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
});

export const listMirrorArchives = operation({
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
});

export const deleteMirrorArchive = operation({
  method: 'delete',
  path: '/api/registry/mirror-archives/{namespace}/{id}',
  operationId: 'deleteMirrorArchive',
  summary: "Delete an archive from the namespace's provider mirror",
  description: 'Needs the admin role; recorded in the audit log.',
  tags: ['registry'],
  auth: 'user',
  params: MirrorArchiveParams,
  responses: { 204: { description: 'Deleted' } },
});

/** In the order the API reference lists them. */
export const registryMirrorOperations = { pushMirrorArchive, listMirrorArchives, deleteMirrorArchive };
