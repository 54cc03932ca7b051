import { integer } from './Setting.js';

/** The provider network mirror of the private registry (docs/registry.md, "Provider mirror"). */
export const PROVIDER_MIRROR_SETTINGS = {
  mirrorMaxArchiveMb: integer({
    env: 'TRELLIS_MIRROR_MAX_ARCHIVE_MB',
    default: 512,
    min: 1,
    max: 4096,
    description:
      'largest provider archive `trellis mirror push` may push, in MiB (`413 mirror_archive_too_large`); it may unpack to 4 times as much',
  }),
};
