/** CI-only endpoints (SPEC §4.4): worker releases and tendrils. */
import { SEMVER_PATTERN } from '@trellis/core';
import { z } from 'zod';
import { checkedByCore, jsonObject } from './common.js';
import { Release } from './records.js';

export const PublishReleaseBody = z.object({
  version: checkedByCore(z.string(), SEMVER_PATTERN, 'a semantic version such as 1.4.0'),
  release_notes: z.string(),
});
export const ReleaseList = z.object({ releases: z.array(Release) });
export const TendrilBody = z.object({ name: z.string(), owner_id: z.uuid(), metadata: jsonObject.optional() });
