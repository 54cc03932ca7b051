import { DomainError, type FieldIssue, NotFoundError, statusOfError, ValidationError } from '@trellis/core';

/**
 * What core refused a form with, as the form shows it again: the problem's status (core's registry
 * decides it, as it does the API's), its code and detail, and the field issues to set beside the
 * fields. A missing record is no refusal (the not-found page says it); neither is an error core
 * did not raise (the server error page).
 */
export interface Refusal {
  status: number;
  code: string;
  detail: string;
  fields: readonly FieldIssue[];
}

export function refusalOf(error: unknown): Refusal {
  if (!(error instanceof DomainError) || error instanceof NotFoundError) throw error;
  return {
    status: statusOfError(error),
    code: error.code,
    detail: error.message,
    fields: error instanceof ValidationError ? error.fields : [],
  };
}

/** Runs a form's change; a refusal comes back as a value for the page to show, anything else throws. */
export async function refused<T>(change: () => Promise<T>): Promise<{ done: T } | { refusal: Refusal }> {
  try {
    return { done: await change() };
  } catch (error) {
    return { refusal: refusalOf(error) };
  }
}
