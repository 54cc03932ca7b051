/** Time comes through this port so tests move it instead of sleeping. */
export interface Clock {
  now(): Date;
}
