import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The file the agent adds to a configuration that declares no backend of its own. */
export const BACKEND_FILE = '_trellis_backend.tf';
/**
 * The override file it adds to a configuration the stock CLI uploaded (issue 27): its `cloud {}`
 * block names this control plane, and a backend in an override file replaces a `cloud` block.
 */
export const BACKEND_OVERRIDE_FILE = '_trellis_backend_override.tf';

/** `backend "x" {` or a `cloud {` block, in `.tf` files; `"backend"` or `"cloud"` keys in `.tf.json`. */
const HCL_BACKEND = /^\s*(backend\s+"[^"]*"|cloud)\s*\{/m;
const JSON_BACKEND = /"(backend|cloud)"\s*:/;

/** True when the root module already says where its state lives. */
export function declaresBackend(dir: string): boolean {
  for (const name of readdirSync(dir)) {
    if (name.endsWith('.tf')) {
      if (HCL_BACKEND.test(stripComments(readFileSync(join(dir, name), 'utf8')))) return true;
    } else if (name.endsWith('.tf.json')) {
      if (JSON_BACKEND.test(readFileSync(join(dir, name), 'utf8'))) return true;
    }
  }
  return false;
}

function stripComments(hcl: string): string {
  return hcl.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*(#|\/\/).*$/gm, '');
}

/** The address of a vine's state in the control plane's `http` backend. */
export function stateAddress(serverUrl: string, vineId: string): string {
  return `${serverUrl.replace(/\/+$/, '')}/api/state/${encodeURIComponent(vineId)}`;
}

/**
 * Points the engine at the control plane's state backend. The file holds no secret: the worker's
 * credentials reach the engine as `TF_HTTP_USERNAME`/`TF_HTTP_PASSWORD` in its environment.
 * Retries ride out a control plane restart in the middle of an apply.
 */
export function writeBackendFile(dir: string, address: string, options: { override?: boolean } = {}): void {
  const quoted = JSON.stringify(address);
  writeFileSync(
    join(dir, options.override === true ? BACKEND_OVERRIDE_FILE : BACKEND_FILE),
    `# Written by trellis-agent: this configuration keeps its state in the Trellis control plane.
terraform {
  backend "http" {
    address        = ${quoted}
    lock_address   = ${quoted}
    unlock_address = ${quoted}
    lock_method    = "LOCK"
    unlock_method  = "UNLOCK"
    retry_max      = 10
    retry_wait_min = 1
    retry_wait_max = 5
  }
}
`,
    { mode: 0o600 },
  );
}
