import { TerminalError } from "@restatedev/restate-sdk";
import { describe, expect, it } from "vitest";
import { recordStep } from "../durable/restate-journal.js";

// A durable step's value and error, as Restate records them: anything that would fail the step's
// journal entry on every retry (its own error, a value JSON cannot hold) is a terminal failure.

describe("recordStep", () => {
  it("records the value with its finishing time", async () => {
    const recorded = await recordStep("tool:c1", async () => ({ content: [{ type: "text", text: "ok" }] }));
    expect(recorded.value).toEqual({ content: [{ type: "text", text: "ok" }] });
    expect(typeof recorded.at).toBe("number");
  });

  it("a value JSON cannot hold is a terminal failure naming the step", async () => {
    await expect(recordStep("model:2", async () => ({ usage: { input: 1n } }))).rejects.toThrow(
      new TerminalError(
        "The result of step model:2 cannot be stored as JSON: Do not know how to serialize a BigInt",
      ),
    );
  });

  it("the step's own error is a terminal failure with its message (a TerminalError as it is)", async () => {
    const thrown = recordStep("permission:c1", async () => {
      throw new Error("the policy service is down");
    });
    await expect(thrown).rejects.toBeInstanceOf(TerminalError);
    await expect(thrown).rejects.toThrow("the policy service is down");
    const terminal = new TerminalError("stop", { errorCode: 409 });
    await expect(
      recordStep("compaction:3", async () => {
        throw terminal;
      }),
    ).rejects.toBe(terminal);
  });
});
