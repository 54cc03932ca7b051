import { execFileSync } from 'node:child_process';
import { mkdtempSync, openSync, closeSync, rmSync, statfsSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A small tmpfs of its own (issue 30's disk-full cases): a real filesystem that really fills, so
 * the `ENOSPC` a test sees is the kernel's. Mounting needs root; `canMountTmpfs` says whether
 * this process may, so a test names why it does not run instead of failing.
 */
export interface Tmpfs {
  /** The mount point. */
  readonly dir: string;
  /** Bytes still free to an unprivileged writer. */
  freeBytes(): number;
  /**
   * Writes a filler file so that only about `leaveBytes` stay free (never less than 0); a second
   * call fills again from what is free then.
   */
  fill(leaveBytes?: number): void;
  /** Removes the filler files: the space is free again. */
  free(): void;
  /** Unmounts (lazily, so a process still holding a file there cannot keep it) and removes the mount point. */
  unmount(): void;
}

/** Root can mount a tmpfs (in a container, only with the capability to); anyone else cannot. */
export const canMountTmpfs: boolean = process.platform === 'linux' && process.getuid?.() === 0;

export function mountTmpfs(sizeBytes: number, prefix = 'trellis-tmpfs-'): Tmpfs {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeBytes},mode=0755`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`cannot mount a tmpfs at ${dir}: ${(error as { stderr?: Buffer }).stderr?.toString().trim()}`);
  }
  const fillers: string[] = [];
  const freeBytes = () => {
    const stats = statfsSync(dir);
    return stats.bavail * stats.bsize;
  };
  return {
    dir,
    freeBytes,
    fill(leaveBytes = 0) {
      const path = join(dir, `.filler-${fillers.length}`);
      fillers.push(path);
      const fd = openSync(path, 'w');
      const block = Buffer.alloc(64 * 1024, 0x66);
      try {
        for (let left = freeBytes() - leaveBytes; left > 0; left -= block.length) {
          writeSync(fd, block, 0, Math.min(block.length, left));
        }
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
      } finally {
        closeSync(fd);
      }
    },
    free() {
      for (const path of fillers.splice(0)) rmSync(path, { force: true });
    },
    unmount() {
      try {
        execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
