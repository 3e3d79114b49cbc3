/** Why an event is kept out of notifications right now (it is still logged and counted). */
export interface Muted {
  reason: 'silenced' | 'maintenance' | 'inhibited';
  /** The silence id, the maintenance window's name or the inhibition rule's name. */
  by: string;
  /** For `inhibited`: the firing incident that inhibits it. */
  source?: { type: string; subject: string };
}
