/**
 * Real peers for integration tests (OpenTofu, MinIO, fake-gcs-server, Open Policy Agent, Helm,
 * go-tfe's integration tests, Trellis's test provider, and Toxiproxy for the fault scenarios).
 *
 * They are built from their Go modules at pinned versions by `scripts/peers.sh`
 * into a cache outside the repository (`$TRELLIS_PEERS_DIR`, default
 * `~/.cache/trellis-peers`), binaries in its `bin/`. A suite that needs one:
 *
 *   const tofu = requirePeer('tofu');
 *   describe.skipIf(!tofu)('agent runs OpenTofu', () => { ... });
 *
 * Under CI=true a missing peer is an error rather than a skipped suite.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';

export type PeerName =
  | 'tofu'
  | 'minio'
  | 'fake-gcs-server'
  | 'opa'
  | 'helm'
  | 'go-tfe.test'
  | 'terraform-provider-null'
  | 'toxiproxy-server';

export const PEER_NAMES: readonly PeerName[] = [
  'tofu',
  'minio',
  'fake-gcs-server',
  'opa',
  'helm',
  'go-tfe.test',
  'terraform-provider-null',
  'toxiproxy-server',
];

/** The `scripts/peers.sh` argument that builds a peer, where it is not the binary's name. */
const BUILD_NAMES: Partial<Record<PeerName, string>> = {
  'go-tfe.test': 'go-tfe',
  'terraform-provider-null': 'null-provider',
  'toxiproxy-server': 'toxiproxy',
};

/** go-tfe's source with its test fixtures, where its tests (`go-tfe.test`) must run. */
export function goTfeSource(): string {
  return join(peersDir(), 'src', 'go-tfe');
}

/** Root of the peers cache: `$TRELLIS_PEERS_DIR` or `~/.cache/trellis-peers` (as in scripts/peers.sh). */
export function peersDir(): string {
  const fromEnv = process.env['TRELLIS_PEERS_DIR'];
  return fromEnv ? resolve(fromEnv) : join(homedir(), '.cache', 'trellis-peers');
}

/** Where scripts/peers.sh puts the binaries. */
export function peersBinDir(): string {
  return join(peersDir(), 'bin');
}

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    if (process.platform !== 'win32') accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function candidates(dir: string, name: string): string[] {
  return process.platform === 'win32' ? [join(dir, `${name}.exe`), join(dir, name)] : [join(dir, name)];
}

/**
 * Absolute path of a peer binary: the peers cache first (the pinned build),
 * then PATH. Null when neither has it.
 */
export function findPeer(name: PeerName): string | null {
  if (!PEER_NAMES.includes(name)) throw new Error(`unknown peer "${String(name)}"`);
  const dirs = [peersBinDir(), ...(process.env['PATH'] ?? '').split(delimiter).filter((d) => d !== '')];
  for (const dir of dirs) {
    for (const file of candidates(dir, name)) {
      if (isExecutableFile(file)) return resolve(file);
    }
  }
  return null;
}

function isCI(): boolean {
  const ci = (process.env['CI'] ?? '').toLowerCase();
  return ci === 'true' || ci === '1';
}

const warned = new Set<string>();

/**
 * The path of a peer a suite needs. When it is missing: under CI=true this
 * throws (CI must not skip silently); otherwise it prints a loud warning to
 * stderr, once per peer and process, and returns null so the caller can skip
 * the suite.
 */
export function requirePeer(name: PeerName, suite?: string): string | null {
  const found = findPeer(name);
  if (found) return found;
  const where = `${peersBinDir()} or PATH`;
  const build = BUILD_NAMES[name] ?? name;
  if (isCI()) {
    throw new Error(
      `test peer "${name}" not found in ${where}${suite ? ` (needed by ${suite})` : ''}: ` +
        `run scripts/peers.sh ${build} to build it (CI=true makes a missing peer an error)`,
    );
  }
  const key = `${name}\0${suite ?? ''}`;
  if (!warned.has(key)) {
    warned.add(key);
    const bar = '!'.repeat(78);
    process.stderr.write(
      `\n${bar}\n` +
        `!! SKIPPED${suite ? `: ${suite}` : ''}\n` +
        `!! test peer "${name}" not found in ${where}.\n` +
        `!! Run scripts/peers.sh (or scripts/peers.sh ${build}) to build it; under CI=true this is an error.\n` +
        `${bar}\n\n`,
    );
  }
  return null;
}
