import { describe, expect, it } from "vitest";
import { HostError, sseFrame } from "../http.js";

describe("agent-machine/http building blocks", () => {
  it("frames one JSON value as one server-sent event, the way the AI SDK and AG-UI clients split them", () => {
    const frame = sseFrame({ type: "text-delta", id: "t", delta: "a\n\nb" });
    // The clients split on a blank line and read `data:` lines: a newline inside the value must stay escaped.
    expect(frame).toBe('data: {"type":"text-delta","id":"t","delta":"a\\n\\nb"}\n\n');
    expect(frame.split("\n\n")).toHaveLength(2);
  });

  it("HostError carries the status and code the host answers with", () => {
    const error = new HostError(409, "run_active", "a run is in progress");
    expect([error.status, error.code, error.message, error.name]).toEqual([
      409,
      "run_active",
      "a run is in progress",
      "HostError",
    ]);
  });
});
