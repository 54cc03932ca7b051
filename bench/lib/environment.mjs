/**
 * What every part of the bench agrees on: where the built server lives, the secrets the control
 * plane runs with, and the environment a control plane (child process or in-process setup) gets.
 */
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const SERVER_BIN = fileURLToPath(new URL('../../packages/server/dist/bin/trellis-server.js', import.meta.url));
export const CHILDREN_DIR = fileURLToPath(new URL('../children/', import.meta.url));

/**
 * The setup control plane (in the bench process) and the measured one (a child process) share this
 * secret, so access tokens minted during setup are valid for the measured server.
 */
export const JWT_SECRET = 'trellis-bench-jwt-secret-of-at-least-32-bytes';
export const BOOTSTRAP_TOKEN = 'trellis-bench-bootstrap-token-0123456789';

/** The `pg` pool size of the control plane: `openSqlStore`'s default, which createControlPlane uses. */
export const SERVER_POOL_SIZE = 10;

/** Only loopback: the bench never listens on, or talks to, anything else. */
export const LOOPBACK = '127.0.0.1';

/** DESIGN §5 variables for a control plane over `databaseUrl`, with its files under `dataDir`. */
export function controlPlaneEnv({ databaseUrl, dataDir, artifactsUrl }) {
  return {
    PORT: '0',
    HOST: LOOPBACK,
    TRELLIS_DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    ...(artifactsUrl ? { TRELLIS_ARTIFACTS_URL: artifactsUrl } : {}),
    TRELLIS_WEB_URL: `http://${LOOPBACK}`,
    CLI_JWT_SECRET: JWT_SECRET,
    TRELLIS_BOOTSTRAP_TOKEN: BOOTSTRAP_TOKEN,
    // Warnings and errors only: the server logs no line per request, but keep start-up quiet too.
    TRELLIS_LOG_LEVEL: 'warn',
  };
}

/**
 * The environment of a child process: the few variables a Node program needs, nothing inherited
 * that could reconfigure the server (a stray DATABASE_URL or TRELLIS_* in the caller's shell).
 */
export function childEnv(extra = {}) {
  const base = {};
  for (const name of ['PATH', 'HOME', 'TMPDIR', 'LANG', 'TZ']) {
    if (process.env[name] !== undefined) base[name] = process.env[name];
  }
  return { ...base, ...extra };
}
