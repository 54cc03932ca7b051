import { integer } from './Setting.js';

/** The private registry (docs/registry.md). */
export const REGISTRY_SETTINGS = {
  registryModuleMaxBytes: integer({
    env: 'TRELLIS_REGISTRY_MODULE_MAX_BYTES',
    default: 100 * 1024 * 1024,
    min: 1024,
    max: 10 * 1024 * 1024 * 1024,
    shownDefault: '`104857600` (100 MiB)',
    description:
      'the largest module tarball `trellis modules publish` may upload, packed (`413 module_too_large`; a declared `Content-Length` over it is refused before the body is read); unpacked, a module holds at most 500 MiB and 100,000 entries',
  }),
};
