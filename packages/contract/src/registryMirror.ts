/** The provider network mirror (issue 28): pushing, listing and deleting its archives. */
import { z } from 'zod';
import { isoTime, PageQuery, uuid } from './common.js';

const namespace = z
  .string()
  .min(1)
  .max(64)
  .describe("the registry namespace: an organization's name, or your personal namespace (`u-…`)");

export const MirrorNamespaceParams = z.object({ namespace });

export const MirrorArchiveParams = z.object({ namespace, id: uuid });

export const PushMirrorArchiveParams = z.object({
  namespace,
  hostname: z.string().describe("the provider's origin registry, e.g. `registry.opentofu.org`"),
  provider_namespace: z.string().describe("the provider's namespace, e.g. `hashicorp`"),
  type: z.string().describe("the provider's type, e.g. `null`"),
  version: z.string().describe('the semantic version, e.g. `3.2.4`'),
  platform: z.string().describe('`<os>_<arch>`, e.g. `linux_amd64`'),
});

export const ListMirrorArchivesQuery = PageQuery;

export const MirrorArchiveRecord = z.object({
  id: uuid,
  provider: z.string().describe('`hostname/namespace/type`'),
  hostname: z.string(),
  namespace: z.string(),
  type: z.string(),
  version: z.string(),
  platform: z.string(),
  size: z.number().int(),
  hashes: z
    .array(z.string())
    .describe('`h1:` (of the files inside, what `tofu` records in its lock file) and `zh:` (sha256 of the zip)'),
  origin: z
    .enum(['pushed', 'pulled'])
    .describe(
      "`pushed` with `trellis mirror push`, or `pulled` by the server from the provider's origin registry (`TRELLIS_MIRROR_UPSTREAM`)",
    ),
  created_at: isoTime,
  created_by: uuid.nullable().describe('the person who pushed it'),
});

export const MirrorArchiveList = z.object({ archives: z.array(MirrorArchiveRecord) });
