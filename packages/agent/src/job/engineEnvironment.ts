/** The agent's own settings and credentials, which the engine (and what it runs) must not see. */
const AGENT_ONLY = /^(TRELLIS_|TF_VAR_|TF_HTTP_)/;

/** The host's environment without the agent's own variables: what git and the engine start from. */
export function withoutAgentVariables(host: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(host)) {
    if (!AGENT_ONLY.test(name)) env[name] = value;
  }
  return env;
}

/**
 * The engine's environment: the host's (PATH, HOME, proxies, git and cloud configuration), minus
 * the agent's own variables, plus automation settings. The job's variables are not in it: they go
 * through `writeVariablesFiles` (an environment entry is capped by the kernel, `spawn E2BIG`, and
 * every child process inherits it). The state backend's credentials are added only where the agent
 * wrote that backend itself (`withStateCredentials`): a configuration's own `http` backend never
 * sees them.
 */
export function engineEnvironment(host: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env = withoutAgentVariables(host);
  env.TF_IN_AUTOMATION = '1';
  env.TF_INPUT = '0';
  env.CHECKPOINT_DISABLE = '1';
  return env;
}

/** The credentials of the control plane's state backend, in the environment only (never in a file). */
export function withStateCredentials(
  env: NodeJS.ProcessEnv,
  backend: { username: string; password: string },
): NodeJS.ProcessEnv {
  return { ...env, TF_HTTP_USERNAME: backend.username, TF_HTTP_PASSWORD: backend.password };
}
