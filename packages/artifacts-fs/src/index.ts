export { FsArtifactStore } from './FsArtifactStore.js';
export { openFsArtifactStore, rootDirectoryFromUrl } from './openFsArtifactStore.js';
