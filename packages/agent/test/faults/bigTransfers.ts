/**
 * The big things of the slow-link and killed-replica scenarios (issue 30): a configuration whose
 * apply prints a log of any size, one whose plan file is big, and how a scenario sees an upload
 * or a download under way (the artifact store's partial files, the agent's workspace).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Prints `var.lines` numbered lines of ~1 KB from the apply, between the ledger's begin and end. */
export const BULK_LOG_CONFIGURATION = `
variable "ledger" {
  type = string
}

variable "lines" {
  type = number
}

resource "terraform_data" "bulk" {
  input = { ledger = var.ledger }

  provisioner "local-exec" {
    command = "echo \\"begin \${self.id} $(date +%s%3N)\\" >> '\${var.ledger}'; awk 'BEGIN { for (i = 1; i <= \${var.lines}; i++) printf \\"bulk %07d %0990d\\\\n\\", i, 0 }'; echo \\"end \${self.id} $(date +%s%3N)\\" >> '\${var.ledger}'"
  }

  provisioner "local-exec" {
    when    = destroy
    command = "echo \\"destroyed \${self.id} $(date +%s%3N)\\" >> '\${self.input.ledger}'"
  }
}
`;

/** What OpenTofu puts before each line that the bulk configuration's `local-exec` prints. */
const BULK_LINE_PREFIX = 'terraform_data.bulk (local-exec): ';

/**
 * The numbers of the bulk configuration's lines in a job's log, in the order they are stored.
 * OpenTofu reads `local-exec`'s output with a line reader (mitchellh/go-linereader) that sends
 * what it holds of a line as a line of its own once 100 ms pass without a byte, so on a busy
 * machine one printed line can reach the log as two, each with the prefix. The pieces are joined
 * again before the lines are read, so every byte the engine printed counts and one missing is seen.
 */
export function bulkLineNumbers(log: string): number[] {
  const printed = log
    .split('\n')
    .filter((line) => line.startsWith(BULK_LINE_PREFIX))
    .map((line) => line.slice(BULK_LINE_PREFIX.length))
    .join('');
  return Array.from(printed.matchAll(/bulk (\d{7}) 0{990}/g), (match) => Number(match[1]));
}

/**
 * A plan of ~20 MB: OpenTofu keeps a snapshot of every module's configuration files in the plan
 * file, and the module at `moduleDir` holds one big file of comments (nothing of it reaches the
 * state). A function-built attribute would land in the state too, and OpenTofu evaluates a
 * `for` over 100,000 `base64sha512` calls in minutes.
 */
export function bigPlanConfiguration(moduleDir: string): string {
  return `
variable "ledger" {
  type = string
}

module "bulk" {
  source = "${moduleDir}"
}

resource "terraform_data" "step" {
  input = { ledger = var.ledger }

  provisioner "local-exec" {
    command = "echo \\"begin \${self.id} $(date +%s%3N)\\" >> '\${var.ledger}'; echo \\"end \${self.id} $(date +%s%3N)\\" >> '\${var.ledger}'"
  }

  provisioner "local-exec" {
    when    = destroy
    command = "echo \\"destroyed \${self.id} $(date +%s%3N)\\" >> '\${self.input.ledger}'"
  }
}
`;
}

/**
 * Writes the big module into `dir`: `bytes` of comment lines of base64 sha512 digests of a counter
 * (deterministic, incompressible: the plan file is about 3/4 of `bytes`).
 */
export function writeBigModule(dir: string, bytes: number): void {
  mkdirSync(dir, { recursive: true });
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const a = createHash('sha512').update(`trellis-slow-link-${i}`).digest('base64');
    const b = createHash('sha512').update(`trellis-slow-link-${i}-b`).digest('base64');
    const line = `# ${a}${b}\n`;
    lines.push(line);
    size += line.length;
  }
  writeFileSync(join(dir, 'blob.tf'), lines.join(''));
}

/** The files named `name` in an agent's workspace of job `jobId` (`job-<first 8>-*`). */
export function filesIn(workDir: string, jobId: string, name: string): string[] {
  try {
    return readdirSync(workDir, { recursive: true })
      .map(String)
      .filter((entry) => entry.startsWith(`job-${jobId.slice(0, 8)}-`) && entry.endsWith(`/${name}`))
      .map((entry) => join(workDir, entry));
  } catch {
    return [];
  }
}

export function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

/** The biggest upload under way in the artifact store (`tmp/*.partial`), in bytes. */
export function biggestPartial(artifactsDir: string): number {
  try {
    return Math.max(
      0,
      ...readdirSync(join(artifactsDir, 'tmp')).map((name) => sizeOf(join(artifactsDir, 'tmp', name))),
    );
  } catch {
    return 0;
  }
}
