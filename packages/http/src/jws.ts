/** The light entry of the JWS signer (`@trellis/http/jws`): `jose` only, none of express. */
export { JoseJwsSigner } from './auth/JoseJwsSigner.js';
