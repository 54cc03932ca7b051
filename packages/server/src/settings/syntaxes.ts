import { isIP } from 'node:net';
import { ConfigError } from './ConfigError.js';

/**
 * `TRELLIS_ENCRYPTION_KEY`: one or more comma-separated 32-byte keys, each as 64 hex digits or
 * base64/base64url (`openssl rand -base64 32`). Never repeated in a message: it is a secret.
 */
export function parseEncryptionKeys(value: string, name: string): readonly Uint8Array[] {
  return value.split(',').map((raw, index) => {
    const text = raw.trim();
    const key = /^[0-9a-f]{64}$/i.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
    if (key.length !== 32 || (!/^[0-9a-f]{64}$/i.test(text) && !/^[A-Za-z0-9+/_-]{43}=?$/.test(text))) {
      throw new ConfigError(
        `${name}: key ${index + 1} must be 32 bytes as 64 hex digits or base64 (openssl rand -base64 32)`,
      );
    }
    return new Uint8Array(key);
  });
}

/** The named subnets of express's `trust proxy` (proxy-addr). */
const TRUST_PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * `TRELLIS_TRUST_PROXY`: `false`, a hop count, or a comma-separated list of addresses, CIDRs and
 * the names loopback, linklocal, uniquelocal. `true` (believe any client) is refused: every
 * client could then pick the address it is limited by.
 */
export function parseTrustProxy(value: string, name: string): false | number | string[] {
  const text = value.trim();
  if (text === '' || text === 'false') return false;
  if (/^\d+$/.test(text)) {
    const hops = Number(text);
    if (hops > 10) throw new ConfigError(`${name}: at most 10 proxy hops (got ${hops})`);
    return hops === 0 ? false : hops;
  }
  if (text === 'true') {
    throw new ConfigError(
      `${name}=true would let any client choose the address it is rate limited by; ` +
        'give the number of proxies in front of the server or their addresses (e.g. 1, or 10.0.0.0/8)',
    );
  }
  return text.split(',').map((raw) => {
    const entry = raw.trim();
    if (TRUST_PROXY_NAMES.has(entry)) return entry;
    const [address = '', prefix, ...rest] = entry.split('/');
    const family = isIP(address);
    const bits = family === 4 ? 32 : 128;
    const prefixOk = prefix === undefined || (/^\d+$/.test(prefix) && Number(prefix) <= bits);
    if (family === 0 || !prefixOk || rest.length > 0) {
      throw new ConfigError(
        `${name}: "${entry}" is not an IP address, a CIDR or one of loopback, linklocal, uniquelocal ` +
          '(or give a hop count, or false)',
      );
    }
    return entry;
  });
}

/** Local development: an issuer on this machine may be plain http; anything else must be https. */
export function isLoopbackUrl(url: string): boolean {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127\./.test(host);
}

/** `TRELLIS_OIDC_ISSUER`: https, or plain http on this machine; no query or fragment; no trailing slash kept. */
export function parseOidcIssuer(value: string, name: string): string | null {
  const raw = value.trim();
  if (raw === '') return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a URL (got "${raw}")`);
  }
  if (url.search || url.hash) throw new ConfigError(`${name} must have no query or fragment (got "${raw}")`);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackUrl(raw))) {
    throw new ConfigError(
      `${name} must be an https:// URL (plain http only on this machine, for local development; got "${raw}")`,
    );
  }
  return raw.replace(/\/+$/, '');
}
