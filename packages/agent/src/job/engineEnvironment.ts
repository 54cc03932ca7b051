import type { Variables } from '@trellis/core';

/** The agent's own settings and credentials, which the engine (and what it runs) must not see. */
const AGENT_ONLY = /^(TRELLIS_|TF_VAR_|TF_HTTP_)/;

/**
 * The engine's environment: the host's (PATH, HOME, proxies, git and cloud configuration), minus
 * the agent's own variables, plus automation settings, the job's variables as `TF_VAR_*` and the
 * worker's credentials for the control plane's state backend (env only, never in a file).
 */
export function engineEnvironment(
  host: NodeJS.ProcessEnv,
  variables: Variables,
  backend: { username: string; password: string },
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(host)) {
    if (!AGENT_ONLY.test(name)) env[name] = value;
  }
  env.TF_IN_AUTOMATION = '1';
  env.TF_INPUT = '0';
  env.CHECKPOINT_DISABLE = '1';
  env.TF_HTTP_USERNAME = backend.username;
  env.TF_HTTP_PASSWORD = backend.password;
  for (const [name, variable] of Object.entries(variables)) env[`TF_VAR_${name}`] = variable.value;
  return env;
}
