import type { StreamType } from '../domain/enums.js';
import type { LogChunk } from '../domain/records.js';

export interface LogStore {
  /** Stores a chunk and gives it the next id (ids only increase). */
  append(ownerId: string, jobId: string, chunk: string, streamType: StreamType, at: string): Promise<LogChunk>;
  /** Chunks of the job with id greater than `after`, ordered by id, at most `limit`. */
  list(ownerId: string, jobId: string, after: number, limit: number): Promise<LogChunk[]>;
}
