export { type ProblemBody, TrellisApiError, TrellisConnectionError } from './errors.js';
export { readServerSentEvents, type ServerSentEvent } from './sse.js';
export {
  type ClientAuth,
  type ClientOptions,
  type CreateConfigurationInput,
  type CreateJobInput,
  type LogStreamEvent,
  TrellisClient,
} from './TrellisClient.js';
