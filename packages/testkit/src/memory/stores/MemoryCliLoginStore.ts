import { type CliLogin, type CliLoginStore, ConflictError, NotFoundError } from '@trellis/core';
import { copy } from '../MemoryState.js';
import type { MemoryTransaction } from '../MemoryTransaction.js';

/**
 * Device logins. Exchanges run in system scope; the browser creates the login in its owner's
 * scope, so a login is visible to the user that approved it.
 */
export class MemoryCliLoginStore implements CliLoginStore {
  constructor(private readonly tx: MemoryTransaction) {}

  async create(login: CliLogin): Promise<CliLogin> {
    const { cliLogins } = this.tx.state;
    this.tx.checkWrite('cli_logins', login.profile_id);
    if (cliLogins.has(login.device_code)) {
      throw new ConflictError('device_code_used', 'this device code already has a login');
    }
    cliLogins.set(login.device_code, copy(login));
    return copy(login);
  }

  /** Units of work are serialized, so reading is already holding the row. */
  async findForUpdate(deviceCode: string): Promise<CliLogin | null> {
    const login = this.visible(deviceCode);
    return login ? copy(login) : null;
  }

  async recordFailedAttempt(deviceCode: string): Promise<number> {
    const login = this.visible(deviceCode);
    if (!login) throw new NotFoundError('cli_login');
    login.attempts += 1;
    return login.attempts;
  }

  async consume(deviceCode: string, at: string): Promise<boolean> {
    const login = this.visible(deviceCode);
    if (!login || login.consumed_at !== null) return false;
    login.consumed_at = at;
    return true;
  }

  private visible(deviceCode: string): CliLogin | undefined {
    const login = this.tx.state.cliLogins.get(deviceCode);
    return login && this.tx.sees(login.profile_id) ? login : undefined;
  }
}
