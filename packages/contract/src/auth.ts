/** Device login and tokens (SPEC §4.1), web sign-in and the user's git providers. */
import { GIT_PROVIDERS, IDENTITY_PROVIDERS } from '@trellis/core';
import { z } from 'zod';
import { isoTime, uuid } from './common.js';

// ---- device login and tokens
export const GenerateBody = z.object({ device_code: z.uuid() });
export const GenerateResponse = z.object({ verification_code: z.string(), expires_at: isoTime });
export const ExchangeBody = z.object({
  device_code: z.uuid(),
  verification_code: z.string().min(1).max(32),
});
export const ExchangeResponse = z.object({
  access_token: z.string(),
  refresh_token: z.string(),
  provider_token: z.string().nullable().describe('OAuth token of the sign-in provider, when there is one'),
  user_email: z.email(),
});
export const RefreshBody = z.object({ refresh_token: z.string().min(1).max(4096) });
export const TokenPairResponse = z.object({ access_token: z.string(), refresh_token: z.string() });
export const WhoAmIResponse = z.object({ id: uuid, email: z.string(), name: z.string() });

// ---- web sign-in and git providers
export const SignInParams = z.object({ provider: z.enum(IDENTITY_PROVIDERS) });
export const SignInQuery = z.object({
  next: z.string().optional().describe('same-origin path to land on after sign-in (default /)'),
});
const callbackParameter = z.string().max(4096).optional();
export const CallbackQuery = z.object({
  code: callbackParameter,
  state: callbackParameter,
  iss: callbackParameter.describe('RFC 9207 issuer identifier, checked when present'),
  error: callbackParameter.describe('set by the provider when the sign-in failed, e.g. access_denied'),
  error_description: callbackParameter,
});
export const ProvidersResponse = z.object({
  providers: z.array(
    z.object({
      id: z.enum(IDENTITY_PROVIDERS),
      name: z.string().describe('label for the sign-in button'),
      signin_url: z.string().describe('path of GET /auth/signin/{provider}; add ?next=<path>'),
    }),
  ),
});
export const GitProviderParams = z.object({ provider: z.enum(GIT_PROVIDERS) });
export const Repository = z.object({
  full_name: z.string(),
  name: z.string(),
  owner: z.string(),
  private: z.boolean(),
  default_branch: z.string().nullable(),
  clone_url: z.string().describe('https, without credentials'),
  html_url: z.string(),
  updated_at: isoTime.nullable(),
});
export const RepositoriesResponse = z.object({ repositories: z.array(Repository) });
