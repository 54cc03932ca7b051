/**
 * Core's records as the API sends them and the contract's schemas of those answers are one shape
 * (issue 29): each pair below must be the same type. Compiled by `recordTypes.test.ts`; a field
 * added to a core record and not to its schema (or the reverse, or typed differently) fails it.
 */
import type * as contract from '@trellis/contract';
import type * as core from '@trellis/core';
import type { z } from 'zod';

/**
 * Each object type written out as plain object types, member by member, at every depth: an
 * interface, an intersection and a zod output of the same members become one form.
 */
type Plain<T, Depth extends unknown[] = []> = Depth['length'] extends 8
  ? T
  : T extends object
    ? { [K in keyof T]: Plain<T[K], [...Depth, unknown]> }
    : T;
/** True when A and B are the same type (not merely assignable one way), at every depth. */
type Equal<A, B> = (<T>() => T extends Plain<A> ? 1 : 2) extends <T>() => T extends Plain<B> ? 1 : 2 ? true : false;
/** `true`, or (failing the `satisfies`) both types to read in the compiler's message. */
export type Same<A, B> = Equal<A, B> extends true ? true : { core: A; contract: B };
/**
 * A job's `execution_metadata` is open (any JSON beside the known results): core writes it as
 * `JsonObject & JobResults`, the schema as an object with a catch-all. Equal field by field
 * elsewhere; there, each must be assignable to the other.
 */
type SameJob<A extends { execution_metadata: unknown }, B extends { execution_metadata: unknown }> =
  Same<Omit<A, 'execution_metadata'>, Omit<B, 'execution_metadata'>> extends true
    ? [A['execution_metadata'], B['execution_metadata']] extends [B['execution_metadata'], A['execution_metadata']]
      ? true
      : { core: A['execution_metadata']; contract: B['execution_metadata'] }
    : Same<Omit<A, 'execution_metadata'>, Omit<B, 'execution_metadata'>>;
type Sent<S extends z.ZodType> = z.output<S>;

export const recordTypes: Record<string, true> = {
  Vineyard: true satisfies Same<core.VineyardView, Sent<typeof contract.Vineyard>>,
  VineyardSummary: true satisfies Same<core.VineyardSummary, Sent<typeof contract.VineyardSummary>>,
  VineDetail: true satisfies Same<core.VineView, Sent<typeof contract.VineDetail>>,
  VineSummary: true satisfies Same<core.VineSummary, Sent<typeof contract.VineSummary>>,
  FleetVineSummary: true satisfies Same<core.FleetVineSummary, Sent<typeof contract.FleetVineSummary>>,
  Job: true satisfies SameJob<core.JobView, Sent<typeof contract.Job>>,
  JobDetail: true satisfies SameJob<core.JobDetailView, Sent<typeof contract.JobDetail>>,
  JobSummary: true satisfies SameJob<core.JobSummaryView, Sent<typeof contract.JobSummary>>,
  Worker: true satisfies Same<core.WorkerView, Sent<typeof contract.Worker>>,
  LogEntry: true satisfies Same<core.LogChunk, Sent<typeof contract.LogEntry>>,
  Org: true satisfies Same<core.OrgView, Sent<typeof contract.Org>>,
  OrgMember: true satisfies Same<core.OrgMemberView, Sent<typeof contract.OrgMember>>,
  Invitation: true satisfies Same<core.InvitationView, Sent<typeof contract.Invitation>>,
  ApiToken: true satisfies Same<core.ApiTokenView, Sent<typeof contract.ApiTokenRecord>>,
  Policy: true satisfies Same<core.PolicyView, Sent<typeof contract.PolicyRecord>>,
  PolicyVersion: true satisfies Same<core.PolicyVersionView, Sent<typeof contract.PolicyVersionRecord>>,
  Notification: true satisfies Same<core.NotificationView, Sent<typeof contract.NotificationRecord>>,
  AuditEntry: true satisfies Same<core.AuditEntry, Sent<typeof contract.AuditEntry>>,
  VcsConnection: true satisfies Same<core.VcsConnectionView, Sent<typeof contract.ConnectVcsResponse>>,
  QueueEntry: true satisfies Same<core.QueueEntryView, Sent<typeof contract.QueueEntry>>,
  Queue: true satisfies Same<core.QueueView, Sent<typeof contract.JobQueue>>,
  PlanChanges: true satisfies Same<core.PlanChangesView, Sent<typeof contract.PlanChangesResponse>>,
};

/**
 * The fields of a request body and of the core input its use case takes: the same names. (Core
 * takes each value as `unknown` and judges it itself, a missing one included, so every bad field
 * of a body is reported at once; the names are what must agree.)
 */
type Keys<T> = keyof T & string;
type SameFields<A, B> = Equal<Keys<A>, Keys<B>> extends true ? true : { core: Keys<A>; contract: Keys<B> };
type Body<S extends z.ZodType> = z.input<S>;

export const requestFields: Record<string, true> = {
  CreateJob: true satisfies SameFields<core.CreateJobInput, Body<typeof contract.CreateJobBody>>,
  CreateConfiguration: true satisfies SameFields<core.CreateVineInput, Body<typeof contract.CreateConfigurationBody>>,
  EditConfiguration: true satisfies SameFields<
    core.EditVineInput & core.VineSettingsInput,
    Body<typeof contract.EditConfigurationBody>
  >,
  CreateNotification: true satisfies SameFields<
    core.CreateNotificationInput,
    Body<typeof contract.CreateNotificationBody>
  >,
  CreatePolicy: true satisfies SameFields<core.CreatePolicyInput, Body<typeof contract.CreatePolicyBody>>,
  UpdatePolicy: true satisfies SameFields<core.UpdatePolicyInput, Body<typeof contract.UpdatePolicyBody>>,
  ApprovePlan: true satisfies SameFields<core.ApproveInput, Body<typeof contract.ApprovePlanBody>>,
  RejectPlan: true satisfies SameFields<core.RejectInput, Body<typeof contract.RejectPlanBody>>,
  OverridePlan: true satisfies SameFields<core.OverrideInput, Body<typeof contract.OverridePlanBody>>,
  ConnectVcs: true satisfies SameFields<core.ConnectVcsInput, Body<typeof contract.ConnectVcsBody>>,
  ConnectModuleRepository: true satisfies SameFields<
    core.ConnectModuleRepositoryInput,
    Body<typeof contract.ConnectModuleRepositoryBody>
  >,
  CreateToken: true satisfies SameFields<core.CreateApiTokenInput, Body<typeof contract.CreateTokenBody>>,
};
