import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A fresh directory for one job under the agent's work directory, owner-only, removed when the
 * job ends however it ends (it holds the source, the plan file and the engine's `.terraform`).
 */
export class Workspace {
  readonly root: string;

  constructor(workDir: string, jobId: string) {
    mkdirSync(workDir, { recursive: true, mode: 0o700 });
    this.root = mkdtempSync(join(workDir, `job-${jobId.slice(0, 8)}-`));
  }

  path(...parts: string[]): string {
    return join(this.root, ...parts);
  }

  remove(): void {
    rmSync(this.root, { recursive: true, force: true, maxRetries: 3 });
  }
}
