export { GcsArtifactStore, type GcsArtifactStoreOptions } from './GcsArtifactStore.js';
export { STAGING_SEGMENT } from '@trellis/core';
export {
  createStorage,
  GCS_CLIENT_DEFAULTS,
  type GcsStoreSettings,
  openGcsArtifactStore,
  parseGcsUrl,
} from './openGcsArtifactStore.js';
