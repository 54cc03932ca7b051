export { FsArtifactStore } from './FsArtifactStore.js';
export { openFsArtifactStore, rootDirectoryFromUrl } from './openFsArtifactStore.js';
export { TarGzChecker } from './TarGzChecker.js';
export { OpenPgpVerifier } from './OpenPgpVerifier.js';
