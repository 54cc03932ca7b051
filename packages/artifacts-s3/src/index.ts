export {
  DEFAULT_BUFFER_BYTES,
  MIN_PART_SIZE,
  S3ArtifactStore,
  type S3ArtifactStoreOptions,
} from './S3ArtifactStore.js';
export {
  createS3Client,
  openS3ArtifactStore,
  parseS3Url,
  S3_CLIENT_DEFAULTS,
  type S3StoreSettings,
} from './openS3ArtifactStore.js';
export { STAGING_SEGMENT } from '@trellis/core';
