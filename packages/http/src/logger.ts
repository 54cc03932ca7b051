/** The slice of a structured logger (pino's shape) that the HTTP layer uses. */
export interface Logger {
  info(data: object, message?: string): void;
  warn(data: object, message?: string): void;
  error(data: object, message?: string): void;
}

export const silentLogger: Logger = {
  info() {},
  warn() {},
  error() {},
};
