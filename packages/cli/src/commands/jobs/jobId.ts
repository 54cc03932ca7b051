import { isUuid } from '@trellis/core';
import { UsageError } from 'clipanion';

/** Job ids are UUIDs; anything else is a typo, said before asking the server. */
export function checkJobId(id: string): string {
  if (!isUuid(id)) throw new UsageError(`a job id is a UUID, got "${id}"`);
  return id.toLowerCase();
}
