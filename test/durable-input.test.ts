import { TerminalError } from "@restatedev/restate-sdk";
import { describe, expect, it } from "vitest";
import { toDecision } from "../durable/restate-journal.js";
import { parseDecision, parseDrain, parsePromptInput, parseQueuedInput } from "../durable/session-input.js";

// What the durable session handlers accept from outside (no server needed): a bad request is a 400
// that names what is wrong, before anything is stored.

function refusal(parse: () => unknown): TerminalError {
  try {
    parse();
  } catch (error) {
    expect(error).toBeInstanceOf(TerminalError);
    return error as TerminalError;
  }
  throw new Error("the input was accepted");
}

describe("durable session input", () => {
  it("turns text, a user message or a list of user / custom messages into stamped messages", () => {
    expect(parsePromptInput("Hi", 7)).toEqual([{ role: "user", content: "Hi", timestamp: 7 }]);
    expect(
      parsePromptInput({ role: "user", content: [{ type: "text", text: "Hi" }], timestamp: 3 }, 7),
    ).toEqual([{ role: "user", content: [{ type: "text", text: "Hi" }], timestamp: 3 }]);
    expect(
      parsePromptInput(
        [
          { role: "custom", customType: "note", content: "context", display: "model" },
          { role: "user", content: "go" },
        ],
        7,
      ),
    ).toEqual([
      { role: "custom", customType: "note", content: "context", display: "model", timestamp: 7 },
      { role: "user", content: "go", timestamp: 7 },
    ]);
  });

  it("takes a run's drain requests as they are, and refuses any other with a 400 that says what is wrong", () => {
    const good = [
      { kind: "steering", mode: "one-at-a-time" },
      { kind: "followUp", mode: "all", peek: true },
      { kind: "steering", mode: "all", bell: { id: "sign_1", runId: "inv_1" }, first: true },
      { kind: "steering", mode: "all", wake: { steeringMode: "all", followUpMode: "one-at-a-time" } },
    ];
    for (const input of good) {
      expect(parseDrain(input)).toEqual(input);
    }
    const bad: [unknown, RegExp][] = [
      [{ kind: "later", mode: "all" }, /kind/],
      [{ kind: "steering" }, /mode/],
      [{ kind: "steering", mode: "all", extra: 1 }, /Unrecognized key: "extra"/],
      [{ kind: "steering", mode: "all", bell: { id: "", runId: "inv_1" } }, /bell\.id/],
      [{ kind: "steering", mode: "all", bell: { id: "b", runId: "r", more: 1 } }, /Unrecognized key: "more"/],
      [{ kind: "steering", mode: "all", peek: "yes" }, /peek/],
      [{ kind: "steering", mode: "all", wake: { steeringMode: "all" } }, /wake\.followUpMode/],
      [{ kind: "steering", mode: "all", first: false }, /first/],
      [[{ kind: "steering", mode: "all" }], /Invalid drain request/],
      [null, /Invalid drain request/],
    ];
    for (const [input, message] of bad) {
      const error = refusal(() => parseDrain(input));
      expect(error.code, JSON.stringify(input)).toBe(400);
      expect(error.message, JSON.stringify(input)).toMatch(message);
    }
  });

  it("refuses malformed prompts with a 400 that says what is wrong", () => {
    const cases: [unknown, RegExp][] = [
      [{ role: "user" }, /^Invalid prompt: content must be text, or a list of/],
      [{ role: "user", content: 5 }, /content must be text/],
      [{ role: "user", content: "hi", extra: 1 }, /Unrecognized key: "extra"/],
      ["   ", /the text is empty/],
      [[], /the list has no messages/],
      [[{ role: "assistant", content: [] }], /\(message 0\): a message with role "assistant" cannot be sent/],
      [
        [{ role: "user", content: "a" }, { role: "toolResult" }],
        /\(message 1\): a message with role "toolResult"/,
      ],
      [42, /expected text, a user message .* got a number/],
      [null, /got null/],
      [{ role: "user", content: "" }, /^Invalid prompt: the text is empty/],
      [{ role: "user", content: " \n" }, /^Invalid prompt: the text is empty/],
      [{ role: "user", content: [] }, /^Invalid prompt: content has no parts/],
      [
        [
          { role: "user", content: "a" },
          { role: "user", content: "" },
        ],
        /\(message 1\): the text is empty/,
      ],
      [{ text: "hi" }, /got an object without a role/],
    ];
    for (const [input, message] of cases) {
      const error = refusal(() => parsePromptInput(input, 1));
      expect(error.code, JSON.stringify(input)).toBe(400);
      expect(error.message, JSON.stringify(input)).toMatch(message);
    }
  });

  it("takes only text or user messages as steering and follow-ups", () => {
    expect(parseQueuedInput("also this", "steer", 9)).toEqual({
      role: "user",
      content: "also this",
      timestamp: 9,
    });
    expect(
      refusal(() => parseQueuedInput({ role: "custom", customType: "x", content: "y" }, "steer", 1)).message,
    ).toMatch(/^Invalid steer message: a message with role "custom" cannot be sent/);
    expect(refusal(() => parseQueuedInput("", "followUp", 1)).message).toMatch(
      /Invalid followUp message: the text is empty/,
    );
    expect(refusal(() => parseQueuedInput({ role: "user", content: "  " }, "steer", 1)).message).toMatch(
      /^Invalid steer message: the text is empty/,
    );
  });

  it("needs a tool call id to approve or deny, and approves only on an explicit yes", () => {
    expect(parseDecision({ toolCallId: "c1" }, "approve")).toEqual({ toolCallId: "c1" });
    expect(parseDecision({ toolCallId: "c1", reason: "no" }, "deny")).toEqual({
      toolCallId: "c1",
      reason: "no",
    });
    expect(refusal(() => parseDecision({}, "approve")).message).toMatch(
      /Invalid approve request: toolCallId/,
    );
    expect(refusal(() => parseDecision({ toolCallId: "c1", reason: "x" }, "approve")).message).toMatch(
      /Unrecognized key: "reason"/,
    );
    // An awakeable anyone resolved with something else is a denial.
    expect(toDecision({ approved: true })).toEqual({ approved: true });
    expect(toDecision({ approved: "yes" })).toEqual({ approved: false });
    expect(toDecision(null)).toEqual({ approved: false });
    expect(toDecision({ approved: false, reason: "later" })).toEqual({ approved: false, reason: "later" });
  });
});
