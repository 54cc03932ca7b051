/** The OpenPGP checks of the registry's providers alone (`@trellis/artifacts-fs/openpgp`): openpgp.js, no store. */
export { OpenPgpVerifier } from './OpenPgpVerifier.js';
