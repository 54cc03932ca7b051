/** The Terraform/OpenTofu `http` state backend (DESIGN §7), one state per vine. */
import { z } from 'zod';

export const VineParams = z.object({ vine_id: z.uuid() });
export const WriteQuery = z.object({
  ID: z.string().max(200).optional().describe('the lock id, when the state is locked'),
});
export const LockInfo = z
  .object({ ID: z.string().min(1).max(200) })
  .passthrough()
  .describe('lock info as the engine sends it: ID, Operation, Info, Who, Version, Created, Path');
/** What the backend answers about a lock: the holder's lock info as it was sent (or why there is none). */
export const LockAnswer = z
  .record(z.string(), z.unknown())
  .describe("the lock info of the lock's holder, as the engine sent it (ID, Operation, Who, ...)");
