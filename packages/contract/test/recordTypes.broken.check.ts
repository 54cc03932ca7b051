/**
 * A pair that is not the same type, for `recordTypes.test.ts` to prove the check fails: a job as
 * people see it is not its detail (the detail adds `waiting_for` and `queue_position`).
 */
import type * as contract from '@trellis/contract';
import type * as core from '@trellis/core';
import type { z } from 'zod';
import type { Same } from './recordTypes.check.js';

export const notTheSame: true = true satisfies Same<core.JobView, z.output<typeof contract.JobDetail>>;
