import type { CliLogin } from '../domain/records.js';

export interface CliLoginStore {
  /** `ConflictError('device_code_used')` when the device code already has a login. */
  create(login: CliLogin): Promise<CliLogin>;
  /** Reads the login and holds it against concurrent exchanges until the unit of work ends. */
  findForUpdate(deviceCode: string): Promise<CliLogin | null>;
  /** Adds one wrong attempt and returns the new count. */
  recordFailedAttempt(deviceCode: string): Promise<number>;
  /** Marks the login used; false when it already was. */
  consume(deviceCode: string, at: string): Promise<boolean>;
}
