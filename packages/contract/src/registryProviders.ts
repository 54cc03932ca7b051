/**
 * The private registry's providers and GPG keys (issue 28), Trellis's own API: publishing
 * (`POST` a version with its `SHA256SUMS` and signature, then `PUT` each zip), lists and deletion.
 * The stock CLI's `providers.v1` protocol is served beside it, not described here.
 */
import { z } from 'zod';
import { isoTime, uuid } from './common.js';

export const RegistryNamespaceParams = z.object({
  namespace: z.string().min(1).max(100).describe('an organization name'),
});

export const RegistryProviderParams = RegistryNamespaceParams.extend({
  type: z.string().min(1).max(64).describe('the provider type, e.g. `null`'),
});

export const RegistryProviderVersionParams = RegistryProviderParams.extend({
  version: z.string().min(1).max(128).describe('a semantic version, e.g. `1.2.0`'),
});

export const RegistryProviderPlatformParams = RegistryProviderVersionParams.extend({
  os: z.string().min(1).max(32).describe('e.g. `linux`'),
  arch: z.string().min(1).max(32).describe('e.g. `amd64`'),
});

export const GpgKeyParams = RegistryNamespaceParams.extend({
  key_id: z.string().min(1).max(64).describe('16 hex digits'),
});

export const ListRegistryProvidersQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).optional().describe('at most this many (default 50, at most 200)'),
  after: z.string().max(64).optional().describe('the `next` of the previous page'),
});

export const PublishProviderVersionBody = z.object({
  protocols: z.array(z.string()).describe('plugin protocol versions, e.g. `["5.0"]`'),
  shasums: z.string().describe('the `SHA256SUMS` file, as text'),
  shasums_signature: z.string().describe('its detached GPG signature (`SHA256SUMS.sig`), base64'),
});

export const ProviderVersionRecord = z.object({
  namespace: z.string(),
  type: z.string(),
  version: z.string(),
  protocols: z.array(z.string()),
  key_id: z.string().describe('the id of the GPG key that signed `SHA256SUMS`'),
  created_at: isoTime,
  platforms: z
    .array(
      z.object({
        os: z.string(),
        arch: z.string(),
        filename: z.string(),
        shasum: z.string(),
        uploaded: z.boolean().describe('false until its zip is `PUT`'),
      }),
    )
    .describe('every zip `SHA256SUMS` lists'),
});

export const ProviderVersionList = z.object({ versions: z.array(ProviderVersionRecord) });

export const RegistryProviderList = z.object({
  providers: z.array(z.object({ type: z.string(), created_at: isoTime })),
  next: z.string().nullable().describe('pass as `after` for the next page; null on the last'),
});

export const AddGpgKeyBody = z.object({
  ascii_armor: z.string().describe('an ASCII-armored GPG public key (`gpg --armor --export KEYID`)'),
});

export const GpgKeyRecord = z.object({
  namespace: z.string(),
  key_id: z.string().describe("the primary key's id, 16 uppercase hex digits"),
  ascii_armor: z.string(),
  created_at: isoTime,
  created_by: uuid.describe('the person who added it'),
});

export const GpgKeyList = z.object({ keys: z.array(GpgKeyRecord) });
