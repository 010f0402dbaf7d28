import { describe, expect, it } from "vitest";
import { runAgent, scriptedModel } from "../testing.js";
import "../testing/vitest.js";

// The vitest matchers of agent-machine/testing/vitest: they pass and fail as the plain assertions do.

describe("the vitest matchers", () => {
  it("pass on a good run, fail with the assertion's message, and work with .not", async () => {
    const run = await runAgent({ provider: scriptedModel([{ text: "hi" }]) }, "hello");
    expect(run).toHaveValidTranscript();
    expect(run).toKeepEventInvariants();
    expect(run).toHaveEndedWith("stop");
    expect(run).toHaveEventsInOrder(["agent_start", { type: "agent_end", reason: "stop" }]);
    expect(run).toLeakNoSecrets();
    expect(run).not.toHaveCalledTool("anything");
    expect(run).not.toHaveEndedWith("limit");

    expect(() => expect(run).toHaveEndedWith("limit")).toThrow(
      'Expected the run to end with "limit", it ended with "stop"',
    );
    expect(() => expect(run).toHaveCalledTool("read_file")).toThrow(/found 0\. Calls made: none/);
    expect(() => expect(run).not.toHaveValidTranscript()).toThrow("expected the transcript not to be valid");
    // made at run time, so no key-shaped string sits in the repository
    const fakeAnthropicKey = ["sk", "ant", "abcdefghijklmnopqrstuv"].join("-");
    expect(() => expect({ key: fakeAnthropicKey }).toLeakNoSecrets()).toThrow(/shaped like an API key/);
  });
});
