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
  registryProviderMaxBytes: integer({
    env: 'TRELLIS_REGISTRY_PROVIDER_MAX_BYTES',
    default: 512 * 1024 * 1024,
    min: 1024,
    max: 16 * 1024 * 1024 * 1024,
    shownDefault: '`536870912` (512 MiB)',
    description:
      'the largest provider zip the private registry takes (`413 provider_zip_too_large`); uploads stream to the artifact store and stop at the limit ([registry.md](registry.md#providers))',
  }),
};
