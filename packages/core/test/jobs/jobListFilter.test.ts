/**
 * A live job list's rule for one changed job (issue 29): the filters of `GET /api/jobs` applied to
 * one job as the store's query applies them to many, for the viewer whose list it is.
 */
import { describe, expect, it } from 'vitest';
import { jobListMatcher } from '../../src/jobs/jobListFilter.js';
import { ValidationError } from '../../src/domain/errors.js';

const VIEWER = '11111111-1111-4111-8111-111111111111';
const ORG = '22222222-2222-4222-8222-222222222222';
const VINE = '33333333-3333-4333-8333-333333333333';
const VINEYARD = '44444444-4444-4444-8444-444444444444';

const job = (changes: Partial<{ status: 'QUEUED' | 'SUCCESS'; owner_id: string; vine_id: string | null }> = {}) => ({
  status: 'QUEUED' as const,
  owner_id: VIEWER,
  vine_id: VINE,
  vineyard_id: VINEYARD,
  ...changes,
});

describe('jobListMatcher', () => {
  it('takes every job with no filter', () => {
    const matches = jobListMatcher({}, VIEWER);
    expect(matches(job())).toBe(true);
    expect(matches(job({ owner_id: ORG, vine_id: null }))).toBe(true);
  });

  it('keeps a list to its status, vine and vineyard', () => {
    expect(jobListMatcher({ status: 'QUEUED' }, VIEWER)(job({ status: 'SUCCESS' }))).toBe(false);
    expect(jobListMatcher({ status: 'SUCCESS' }, VIEWER)(job({ status: 'SUCCESS' }))).toBe(true);
    expect(jobListMatcher({ vine_id: VINE }, VIEWER)(job({ vine_id: null }))).toBe(false);
    expect(jobListMatcher({ vine_id: VINE.toUpperCase() }, VIEWER)(job())).toBe(true);
    expect(jobListMatcher({ vineyard_id: ORG }, VIEWER)(job())).toBe(false);
  });

  it('keeps a personal list to the viewer and an organization list to the organization', () => {
    expect(jobListMatcher({ org_id: 'personal' }, VIEWER)(job())).toBe(true);
    expect(jobListMatcher({ org_id: 'personal' }, VIEWER)(job({ owner_id: ORG }))).toBe(false);
    expect(jobListMatcher({ org_id: ORG }, VIEWER)(job({ owner_id: ORG }))).toBe(true);
    expect(jobListMatcher({ org_id: ORG }, VIEWER)(job())).toBe(false);
  });

  it('refuses the filters the list refuses', () => {
    expect(() => jobListMatcher({ status: 'DONE' }, VIEWER)).toThrow(ValidationError);
    expect(() => jobListMatcher({ org_id: 'everyone' }, VIEWER)).toThrow(ValidationError);
    expect(() => jobListMatcher({ vine_id: 'nope' }, VIEWER)).toThrow(ValidationError);
  });
});
