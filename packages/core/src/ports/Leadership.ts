/**
 * Which process runs a global background task (`scope: 'global'`): one at a time across every
 * replica on the database. On Postgres a session advisory lock per task, held by the replica that
 * took it until it resigns or its connection ends; where one process is all there is (SQLite),
 * that process always leads (`SoleLeadership`).
 */
export interface Leadership {
  /**
   * Whether this process leads `taskId` now: true when it already held the lead (and still does)
   * or took it just now because nobody held it. A lead is kept from one turn to the next, so a
   * global task runs once per interval across replicas, wherever it runs.
   */
  tryLeadership(taskId: string): Promise<boolean>;
  /** Gives up every lead this process holds, so another replica takes them at its next turn. */
  resign(): Promise<void>;
}
