/** The tarball checker alone (issue 23), for the light testkit entry: no filesystem store behind it. */
export { TarGzChecker } from './TarGzChecker.js';
