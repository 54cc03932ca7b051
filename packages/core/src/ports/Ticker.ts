/**
 * What wakes recurring work: real intervals in production (`IntervalTicker`), turned by hand in
 * tests (testkit's `ManualTicker`), so no test waits on real time for a scheduling decision.
 */
export interface Ticker {
  /** Calls `tick` every `seconds`, the first time one interval from now, until the returned function is called. */
  every(seconds: number, tick: () => void): () => void;
}
