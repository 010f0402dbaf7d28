// One error type for the three sides of one protocol: the host's HostError and the page's
// RemoteAgentError are AgentCallError under their old (deprecated) names, and code that catches
// either keeps catching what every side now throws.
import { describe, expect, it } from "vitest";
import { HostError, readRunAgentInput } from "../http.js";
import { AgentCallError } from "../index.js";
import { RemoteAgentError } from "../react.js";

describe("AgentCallError", () => {
  it("is what HostError and RemoteAgentError are, and instanceof either holds for it", () => {
    const host = new HostError(409, "run_active", "a run is in progress");
    const remote = new RemoteAgentError(404, "not_found", "no call c1");
    const error = new AgentCallError(400, "refused", "the edited arguments fail the schema");
    expect(host).toBeInstanceOf(AgentCallError);
    expect(remote).toBeInstanceOf(AgentCallError);
    for (const value of [host, remote, error]) {
      expect(value).toBeInstanceOf(HostError);
      expect(value).toBeInstanceOf(RemoteAgentError);
    }
    expect([host.name, remote.name, error.name]).toEqual(["HostError", "RemoteAgentError", "AgentCallError"]);
    expect(new Error("x")).not.toBeInstanceOf(HostError);
    expect(new Error("x")).not.toBeInstanceOf(RemoteAgentError);
  });

  it("is what the host's routes throw for bad input", () => {
    let thrown: unknown;
    try {
      readRunAgentInput({ threadId: 3 }, undefined);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(AgentCallError);
    expect(thrown).toMatchObject({ status: 400, code: "bad_request", name: "AgentCallError" });
  });
});
