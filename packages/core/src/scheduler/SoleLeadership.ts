import type { Leadership } from '../ports/Leadership.js';

/** Where one process is all there is (SQLite, a test), it leads every global task. */
export class SoleLeadership implements Leadership {
  async tryLeadership(): Promise<boolean> {
    return true;
  }

  async resign(): Promise<void> {}
}
