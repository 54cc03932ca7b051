/** The environment does not configure a server that can start: the message names the variable and what was wrong. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}
