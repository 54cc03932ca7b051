/**
 * What an agent says it can run when it claims (`?features=` of `POST /api/jobs/claim`, issue 27):
 * `upload_source`, a job whose snapshot source is an uploaded configuration version, run in its
 * `path`; `run_options`, a PLAN's `-target`, `-replace`, `-refresh-only`, `-refresh=false`. An
 * older agent says nothing, and is never given a job it would run as something else.
 */
export const AGENT_FEATURES = ['upload_source', 'run_options'] as const;
export type AgentFeature = (typeof AGENT_FEATURES)[number];
