// A durable schedule's slot comes a little early and waits for its time: Restate's delayed calls
// fire some ms late, and a slot's wake has hops to make (SessionWakes.fire, the inbox, the session)
// that can be made before the slot as well as after. Only the message's queueing waits for it.

/**
 * How much earlier than its slot a slot's delayed call is set to come. Restate's timers fire a
 * few ms late (about 6 on a local server), and the hops from `fire` to the woken run's first model
 * call take some more: the call comes a little early, `fire` journals its time, the inbox asks
 * the session to wake, and the message is queued at the slot (on time, never before) for a run
 * that has started meanwhile.
 */
export const SLOT_LEAD_MS = 20;

/**
 * The delay of the call that fires the slot at `slot`, made at `now`: {@link SLOT_LEAD_MS} early.
 *
 * @example
 * ```ts
 * slotCallDelay(1_000_100, 1_000_000); // 80
 * ```
 */
export function slotCallDelay(slot: number, now: number, lead = SLOT_LEAD_MS): number {
  return Math.max(0, slot - lead - now);
}

/**
 * Waits for `slot` by this process's clock: at most `lead` ms, so a clock that lags Restate's
 * does not hold the object longer than the call was set early. Resolves at once for a slot passed
 * (a late call, or a replay).
 *
 * @example
 * ```ts
 * await untilSlot(input.slot); // Date.now() >= input.slot, or `lead` ms waited
 * ```
 */
export async function untilSlot(slot: number, lead = SLOT_LEAD_MS): Promise<void> {
  const wait = Math.min(lead, slot - Date.now());
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}
