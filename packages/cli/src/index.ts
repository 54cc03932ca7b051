export { createCli, runCli } from './cli.js';
export { COMMANDS } from './commands/index.js';
export { TrellisCommand } from './commands/TrellisCommand.js';
export { ExitCode } from './exitCodes.js';
export { AuthFile, authFilePath, type StoredLogin } from './auth/AuthFile.js';
export { withFileLock } from './auth/FileLock.js';
export { LoginSession } from './auth/LoginSession.js';
