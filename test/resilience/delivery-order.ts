import type { VerifiedDelivery } from '../support/webhook-receiver.js';

/**
 * Whether a receiver got its notifications in order. Two views of it:
 *
 * - per group: notification ids are `<group key>~<group creation, base 36>~<sequence>` (see
 *   notifiers/routing/aggregation.ts), so within one group the first acceptance of each id must come
 *   in increasing sequence;
 * - across the receiver: one notification is under way at a time and one that has to wait holds
 *   the others, so the order in which ids first reached the receiver (any answer) is the order in
 *   which they were accepted: nothing overtook a notification that was being refused.
 *
 * `replayed` ids (dead letters sent again, which go to the end of the queue by design) are left out.
 */
export function orderProblems(
  /** Every verified request, in arrival order. */
  deliveries: readonly VerifiedDelivery[],
  /** The ones answered with a 2xx, in arrival order. */
  acceptances: readonly VerifiedDelivery[],
  replayed: ReadonlySet<string> = new Set(),
): string[] {
  const problems: string[] = [];
  const ids = (list: readonly VerifiedDelivery[]) =>
    [...new Set(list.map((delivery) => delivery.webhookId))].filter((id) => !replayed.has(id));
  const firstSeen = ids(deliveries);
  const accepted = ids(acceptances);

  const lastSequence = new Map<string, number>();
  for (const id of accepted) {
    const cut = id.lastIndexOf('~');
    const group = id.slice(0, cut);
    const sequence = Number(id.slice(cut + 1));
    const before = lastSequence.get(group) ?? 0;
    if (!(sequence > before)) problems.push(`${id} accepted after sequence ${before} of its group`);
    lastSequence.set(group, sequence);
  }
  const acceptedSet = new Set(accepted);
  const seenThenAccepted = firstSeen.filter((id) => acceptedSet.has(id));
  const at = seenThenAccepted.findIndex((id, index) => accepted[index] !== id);
  if (at >= 0) {
    problems.push(
      `accepted out of the order they first arrived in, from #${at + 1}: arrived ${seenThenAccepted[at]}, accepted ${accepted[at]}`,
    );
  }
  return problems;
}
