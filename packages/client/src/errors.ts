/** RFC 9457 problem details as the control plane sends them. */
export interface ProblemBody {
  type?: string;
  title?: string;
  status: number;
  detail?: string;
  code?: string;
  errors?: { path: string; message: string }[];
  request_id?: string;
  /** Members a code adds, such as `role` and `required_role` of `insufficient_role`. */
  [extension: string]: unknown;
}

/** The control plane answered with an error; `code` is the stable problem code. */
export class TrellisApiError extends Error {
  override name = 'TrellisApiError';
  readonly status: number;
  readonly code: string;
  readonly detail: string;
  readonly errors: { path: string; message: string }[];
  readonly requestId: string | null;
  /** The problem's other members (RFC 9457 extensions), e.g. `role` and `required_role`. */
  readonly extensions: Readonly<Record<string, unknown>>;

  constructor(problem: ProblemBody) {
    const code = problem.code ?? `http_${problem.status}`;
    const detail = problem.detail ?? problem.title ?? `HTTP ${problem.status}`;
    super(`${detail} (${code})`);
    this.status = problem.status;
    this.code = code;
    this.detail = detail;
    this.errors = problem.errors ?? [];
    this.requestId = problem.request_id ?? null;
    const {
      type: _type,
      title: _title,
      status: _status,
      detail: _detail,
      code: _code,
      errors: _errors,
      request_id: _id,
      ...extensions
    } = problem;
    this.extensions = extensions;
  }
}

/**
 * The server answered with a redirect, which the client never follows: a request carries the
 * caller's credentials (bearer token, worker token, refresh token), and following a redirect
 * would hand them to wherever the `Location` points. `location` is that target (resolved), so
 * the caller can say which URL to configure instead.
 */
export class TrellisRedirectError extends TrellisApiError {
  override name = 'TrellisRedirectError';
  readonly location: string | null;

  constructor(requestUrl: string, status: number, location: string | null) {
    const where = location ?? 'an unnamed location';
    super({
      status,
      code: 'redirect_refused',
      detail:
        `${requestUrl} answered with a redirect (HTTP ${status}) to ${where}; ` +
        'the Trellis client does not follow redirects, so that no credential is sent elsewhere. ' +
        'If that address is the control plane, use it as the server URL',
    });
    this.location = location;
  }
}

/** The control plane could not be reached at all (refused, DNS, TLS, timeout). */
export class TrellisConnectionError extends Error {
  override name = 'TrellisConnectionError';
  constructor(
    readonly baseUrl: string,
    cause: unknown,
  ) {
    const reason = describeCause(cause);
    super(`cannot reach the Trellis control plane at ${baseUrl}: ${reason}`, { cause });
  }
}

function describeCause(cause: unknown): string {
  const inner = (cause as { cause?: { code?: string; message?: string } })?.cause;
  if (inner?.code) return inner.code;
  if (cause instanceof Error && cause.name === 'TimeoutError') return 'timed out';
  return inner?.message ?? (cause instanceof Error ? cause.message : String(cause));
}
