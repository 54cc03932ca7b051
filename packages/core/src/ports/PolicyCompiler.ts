/** What the engine says of a module. */
export type PolicyCheck =
  /** It compiles; `rules` are the names of the rules it defines (e.g. `deny`). */
  | { status: 'ok'; package: string; rules: string[] }
  /** It does not compile: the engine's message. */
  | { status: 'invalid'; message: string }
  /** No engine here (no `opa` binary): the agent reports compile errors instead. */
  | { status: 'unavailable' };

/**
 * Checks a policy's Rego module when it is saved (issue 15), with the same engine the agents
 * evaluate it with (Open Policy Agent).
 */
export interface PolicyCompiler {
  check(module: string): Promise<PolicyCheck>;
}
