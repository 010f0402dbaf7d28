import { describe, expect, it } from "vitest";
import { newSessionId } from "../cli/session-store.js";

describe("session ids", () => {
  it("sort by creation time, to the millisecond (two sessions in one second keep their order)", () => {
    const start = Date.parse("2026-11-23T22:13:28.998Z");
    const ids = Array.from({ length: 50 }, (_, i) => newSessionId(new Date(start + i)));
    expect([...ids].sort()).toEqual(ids);
    expect(ids[0]).toMatch(/^20261123-221328998-[0-9a-f]{6}$/);
  });

  it("sort after the ids of earlier releases (second resolution) from the same second", () => {
    const older = "20261123-221328-ffffff";
    expect(newSessionId(new Date("2026-11-23T22:13:28.000Z")) > older).toBe(true);
  });
});
