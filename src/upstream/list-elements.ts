import type { z } from 'zod';
import { type ErrorContext, InvalidPayloadError, summarizeIssues } from './errors.js';

/**
 * The fleet lists (`GET /v1/vehicles`, `GET /api/robots`) read element by element: the envelope
 * (the array, where it sits) must be right or the whole answer is an `InvalidPayloadError` as
 * usual, but one malformed element costs only itself. It is left out of the items and reported
 * as rejected, with its id when the element names one readably, so that its entity can carry the
 * error (and is not taken for gone).
 */

/** An element of a list that did not match the spec. */
export interface RejectedElement {
  /** Its position in the list (0-based). */
  index: number;
  /** The entity's id, when the element names one readably despite what is wrong with it. */
  id?: string;
  /** What was wrong (`invalid_payload`), naming the entity (or the position) and the fields. */
  error: InvalidPayloadError;
}

/** A list read element by element: the elements that matched, and the ones that did not. */
export interface ListReading<T> {
  items: T[];
  rejected: RejectedElement[];
}

/** How the elements of one list are checked. */
export interface ElementRule<S extends z.ZodType> {
  /** The list's operation id, for the errors. */
  operation: string;
  schema: S;
  /** What an element is in errors: `vehicle`, `robot`. */
  noun: string;
  /** The element's id when it names one readably, whatever else is wrong with it. */
  idOf(element: unknown): string | undefined;
}

/** Checks each element of `elements` against `rule.schema`. */
export function readElements<S extends z.ZodType>(
  elements: readonly unknown[],
  rule: ElementRule<S>,
): ListReading<z.output<S>> {
  const reading: ListReading<z.output<S>> = { items: [], rejected: [] };
  elements.forEach((element, index) => {
    const parsed = rule.schema.safeParse(element);
    if (parsed.success) {
      reading.items.push(parsed.data);
      return;
    }
    const id = rule.idOf(element);
    const ctx: ErrorContext =
      id === undefined
        ? { operation: rule.operation, subject: `${rule.noun} list element ${index}` }
        : { operation: rule.operation, target: id, subject: `${rule.noun} "${id}"` };
    reading.rejected.push({
      index,
      ...(id === undefined ? {} : { id }),
      error: new InvalidPayloadError(ctx, summarizeIssues(parsed.error.issues)),
    });
  });
  return reading;
}
