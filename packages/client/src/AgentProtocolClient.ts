import type {
  ArtifactAnswer,
  AgentJobView,
  ClaimAnswer,
  HeartbeatAnswerView,
  LogPageRequest,
  LogPageView,
  LogBatchAnswer,
  LogPostAnswer,
  PlanChangesUpload,
  PublishReleaseRequest,
  RegisterWorkerRequest,
  RegistrationAnswer,
  ReleaseView,
  StatusAnswer,
  StatusReport,
  TendrilRequest,
  WorkerRecordView,
} from '@trellis/contract';
import type { JsonObject, StreamType } from '@trellis/core';
import { matchPath } from '@trellis/contract/operation';
import { TrellisApiError } from './errors.js';
import { OPERATION_ROUTES } from './operationRoutes.js';
import { collect, HttpTransport, type ListPage, type PageOptions } from './HttpTransport.js';

/** The agent protocol (SPEC §4.2) and the CI-only release calls (SPEC §4.4). */
export class AgentProtocolClient extends HttpTransport {
  // ---- the agent protocol (SPEC §4.2)
  /** Registers an agent with a user's bearer token (`POST /api/workers/register`). */
  registerAgent(input: RegisterWorkerRequest): Promise<RegistrationAnswer> {
    return this.call('registerWorker', { body: input });
  }
  /**
   * The next job, or null; `wait` long-polls for up to that many seconds (max 30); `features`:
   * what this agent can run (core's `AGENT_FEATURES`), else it is never given a job needing them.
   */
  async claimJob(
    options: { wait?: number; signal?: AbortSignal; features?: readonly string[] } = {},
  ): Promise<ClaimAnswer | null> {
    const wait = options.wait ?? 0;
    const features = options.features?.join(',');
    const response = await this.request('claimJob', {
      query: { wait: wait > 0 ? wait : undefined, features: features || undefined },
      timeoutMs: this.timeoutMs + wait * 1000,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (response.status === 204) return null;
    return (await response.json()) as ClaimAnswer;
  }
  /**
   * `runningJobIds`: on an agent's first heartbeat, the jobs it runs (none after a restart); with
   * `afterUnansweredClaim`, the jobs it runs after a claim whose answer may have been lost.
   * `timeoutMs`: given up sooner than other calls (a fenced agent's probe of the link).
   */
  heartbeat(
    version: string,
    runningJobIds?: readonly string[],
    options: { afterUnansweredClaim?: boolean; timeoutMs?: number } = {},
  ): Promise<HeartbeatAnswerView> {
    const body =
      runningJobIds === undefined
        ? { version }
        : {
            version,
            running_job_ids: [...runningJobIds],
            ...(options.afterUnansweredClaim ? { after_unanswered_claim: true } : {}),
          };
    return this.call('heartbeat', {
      body,
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    });
  }
  getJobForAgent(id: string): Promise<AgentJobView> {
    return this.call('getJobForAgent', { params: { id } });
  }
  /**
   * Writes a version of a vine's state as the engine's `http` backend does (`POST
   * /api/state/{vine_id}`, HTTP Basic: the worker id and the job's state token): the agent pushes
   * the final state its engine could not store (`errored.tfstate`) once the control plane answers.
   */
  async writeState(
    vineId: string,
    state: Uint8Array,
    credentials: { username: string; password: string },
  ): Promise<void> {
    const response = await this.request('writeState', {
      params: { vine_id: vineId },
      auth: { kind: 'none' },
      headers: {
        Authorization: `Basic ${btoa(`${credentials.username}:${credentials.password}`)}`,
        'Content-Type': 'application/json',
      },
      rawBody: state,
    });
    await response.body?.cancel();
  }
  /**
   * `claimNext`: when this report ends the job, claim the agent's next job in the same request,
   * with these features (`next_claim` of the answer: the job, or null; absent from an older server).
   */
  reportStatus(
    id: string,
    report: StatusReport,
    options: { claimNext?: readonly string[] } = {},
  ): Promise<StatusAnswer> {
    const query = options.claimNext ? { claim_next: options.claimNext.join(',') } : {};
    return this.call('reportJobStatus', { params: { id }, query, body: report });
  }
  /** One chunk: the operation answers a single chunk with its id (a batch with its last seq). */
  async appendLog(id: string, chunk: string, streamType: StreamType): Promise<LogPostAnswer> {
    const answer = await this.call('appendJobLog', {
      params: { id },
      body: { log_chunk: chunk, stream_type: streamType },
    });
    return answer as LogPostAnswer;
  }
  /** A batch of chunks with consecutive sequence numbers; repeating a batch stores it once. */
  async appendLogBatch(
    id: string,
    chunks: ReadonlyArray<{ seq: number; log_chunk: string; stream_type: StreamType }>,
  ): Promise<LogBatchAnswer> {
    const answer = await this.call('appendJobLog', { params: { id }, body: { chunks: [...chunks] } });
    return answer as LogBatchAnswer;
  }
  readLogs(id: string, page: LogPageRequest = {}): Promise<LogPageView> {
    return this.call('readJobLogsAsAgent', { params: { id }, query: page });
  }
  /** Streams the plan file up; `size` lets the server refuse an oversized file before reading it. */
  uploadPlanArtifact(
    id: string,
    body: Uint8Array | ReadableStream<Uint8Array>,
    size?: number,
  ): Promise<ArtifactAnswer> {
    return this.call('uploadPlanArtifact', {
      params: { id },
      rawBody: body as NonNullable<RequestInit['body']>,
      headers: {
        'Content-Type': 'application/octet-stream',
        ...(size !== undefined ? { 'Content-Length': String(size) } : {}),
      },
      timeoutMs: 0,
    });
  }
  /** The plan's redacted change document (issue 29), after its plan file; a repeat replaces it. */
  uploadPlanChanges(id: string, document: PlanChangesUpload): Promise<ArtifactAnswer> {
    return this.call('uploadPlanChanges', { params: { id }, body: document });
  }
  async downloadPlanArtifact(id: string): Promise<{ body: ReadableStream<Uint8Array>; size: number; sha256: string }> {
    const response = await this.request('downloadPlanArtifact', { params: { id }, timeoutMs: 0 });
    if (!response.body) throw new TrellisApiError({ status: 502, code: 'empty_body', detail: 'no artifact body' });
    return {
      body: response.body,
      size: Number(response.headers.get('content-length')),
      sha256: (response.headers.get('etag') ?? '').replaceAll('"', ''),
    };
  }
  /**
   * The configuration version of a claimed job, from the `url` its claim names (a path on this
   * server, fetched with the agent's credentials only: never another origin).
   */
  async downloadConfigurationVersion(url: string): Promise<{ body: ReadableStream<Uint8Array>; sha256: string }> {
    const params = matchPath({ path: OPERATION_ROUTES.downloadConfigurationVersion[1] }, url);
    if (params?.id === undefined || params.version === undefined) {
      throw new TrellisApiError({
        status: 400,
        code: 'invalid_url',
        detail: `not a configuration version path: ${url}`,
      });
    }
    const response = await this.request('downloadConfigurationVersion', {
      params: { id: params.id, version: params.version },
      timeoutMs: 0,
    });
    if (!response.body) throw new TrellisApiError({ status: 502, code: 'empty_body', detail: 'no tarball body' });
    return { body: response.body, sha256: (response.headers.get('etag') ?? '').replaceAll('"', '') };
  }
  getWorkerForAgent(id: string): Promise<WorkerRecordView> {
    return this.call('getWorkerForAgent', { params: { id } });
  }
  updateWorkerMetadata(id: string, metadata: JsonObject): Promise<WorkerRecordView> {
    return this.call('updateWorkerMetadata', { params: { id }, body: metadata });
  }

  // ---- CI-only (SPEC §4.4)
  publishRelease(input: PublishReleaseRequest): Promise<ReleaseView> {
    return this.call('publishWorkerRelease', { body: input });
  }
  /** Every published release, newest first (walks all pages). */
  listReleases(): Promise<ReleaseView[]> {
    return collect(this.walk('listWorkerReleases', 'releases', {}));
  }
  listReleasesPage(page: PageOptions = {}): Promise<ListPage<ReleaseView>> {
    return this.listPage('listWorkerReleases', 'releases', { query: page });
  }
  registerTendril(input: TendrilRequest): Promise<RegistrationAnswer> {
    return this.call('registerTendril', { body: input });
  }
}
