import { type CliLogin, type CliLoginStore, type IdentityProvider, NotFoundError } from '@trellis/core';
import type { SqlSession } from '../dialects/Dialect.js';
import {
  integerOut,
  type Row,
  textOut,
  textOutOrNull,
  timeIn,
  timeInOrNull,
  timeOut,
  timeOutOrNull,
  uuidOut,
  uuidOutOrNull,
} from '../rows.js';

export class SqlCliLoginStore implements CliLoginStore {
  constructor(private readonly db: SqlSession) {}

  async create(login: CliLogin): Promise<CliLogin> {
    const [row] = await this.db.recoverable((db) =>
      db
        .insert('cli_logins', {
          device_code: login.device_code,
          verification_code: login.verification_code,
          profile_id: login.profile_id,
          provider: login.provider,
          created_at: timeIn(login.created_at),
          expires_at: timeIn(login.expires_at),
          attempts: login.attempts,
          consumed_at: timeInOrNull(login.consumed_at),
        })
        .returning('*'),
    );
    return toCliLogin(row);
  }

  async findForUpdate(deviceCode: string): Promise<CliLogin | null> {
    const row = await this.db.lockForUpdate(this.db.table('cli_logins').where({ device_code: deviceCode })).first();
    return row ? toCliLogin(row) : null;
  }

  /** One statement, so concurrent wrong guesses each count. */
  async recordFailedAttempt(deviceCode: string): Promise<number> {
    const [row] = await this.db
      .table('cli_logins')
      .where({ device_code: deviceCode })
      .increment('attempts', 1)
      .returning(['attempts']);
    if (!row) throw new NotFoundError('cli_login');
    return integerOut(row.attempts);
  }

  async consume(deviceCode: string, at: string): Promise<boolean> {
    const changed = await this.db
      .table('cli_logins')
      .where({ device_code: deviceCode })
      .whereNull('consumed_at')
      .update({ consumed_at: timeIn(at) });
    return changed > 0;
  }
}

function toCliLogin(row: Row): CliLogin {
  return {
    device_code: uuidOut(row.device_code),
    verification_code: textOut(row.verification_code),
    profile_id: uuidOutOrNull(row.profile_id),
    provider: textOutOrNull(row.provider) as IdentityProvider | null,
    created_at: timeOut(row.created_at),
    expires_at: timeOut(row.expires_at),
    attempts: integerOut(row.attempts),
    consumed_at: timeOutOrNull(row.consumed_at),
  };
}
