import { afterEach, describe, expect, it, vi } from "vitest";
import { SLOT_LEAD_MS, slotCallDelay, untilSlot } from "../durable/slot-lead.js";

// A durable schedule's slot is a delayed call set SLOT_LEAD_MS early (Restate's timers fire a few
// ms late); the inbox then waits for the slot before it queues the message, so the message goes out
// on time, never before, to a run started meanwhile.

afterEach(() => vi.useRealTimers());

describe("a slot's delayed call and its wait", () => {
  it("sets the call SLOT_LEAD_MS before the slot, and at once for a slot closer than that", () => {
    expect(slotCallDelay(10_000, 1_000)).toBe(9_000 - SLOT_LEAD_MS);
    expect(slotCallDelay(1_005, 1_000)).toBe(0);
    expect(slotCallDelay(500, 1_000)).toBe(0);
  });

  it("waits for the slot when the call came early, never more than the lead, not at all once it passed", async () => {
    vi.useFakeTimers({ now: 1_000 });
    let done = false;
    void untilSlot(1_012).then(() => (done = true));
    await vi.advanceTimersByTimeAsync(11);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(done).toBe(true);
    expect(Date.now()).toBe(1_012);

    // A clock far behind Restate's: the wait stops at the lead.
    done = false;
    void untilSlot(Date.now() + 10_000).then(() => (done = true));
    await vi.advanceTimersByTimeAsync(SLOT_LEAD_MS);
    expect(done).toBe(true);

    // A replay, or a call that came late: no wait.
    await expect(
      Promise.race([untilSlot(Date.now() - 5), new Promise((r) => setTimeout(r, 1, "waited"))]),
    ).resolves.toBeUndefined();
  });
});
