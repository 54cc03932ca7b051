import { TooLargeError, type UseCases, ValidationError } from '@trellis/core';
import type { Request } from 'express';
import { pagedList } from '../../routing/pagedList.js';
import { implement, type RouteSpec } from '../../routing/route.js';
import { operations } from '@trellis/contract';

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
    implement(operations.pushMirrorArchive, async ({ user, params, req }) => {
      const { namespace, provider_namespace, ...address } = params;
      const pushed = await useCases.mirror.push(
        user,
        namespace,
        { ...address, namespace: provider_namespace },
        archiveBody(req, useCases.mirror.limits.maxArchiveBytes),
      );
      return { status: pushed.created ? 201 : 200, body: pushed.archive };
    }),
    implement(operations.listMirrorArchives, async ({ req, user, params, query }) =>
      pagedList(req, 'archives', await useCases.mirror.list(user, params.namespace, query)),
    ),
    implement(operations.deleteMirrorArchive, async ({ user, params }) => {
      await useCases.mirror.delete(user, params.namespace, params.id);
      return { status: 204 };
    }),
  ];
}
