import { describe, expect, it } from "vitest";
import { sessionsRoot, userDataDir, workspaceKey } from "../cli/session-location.js";

describe("the sessions' folder", () => {
  it("is the platform's data folder, keyed by a readable, unique workspace name", () => {
    expect(userDataDir({ XDG_DATA_HOME: "/x/data" }, "linux", "/home/ana")).toBe("/x/data/agent-machine");
    expect(userDataDir({}, "linux", "/home/ana")).toBe("/home/ana/.local/share/agent-machine");
    expect(userDataDir({}, "darwin", "/Users/ana")).toBe(
      "/Users/ana/Library/Application Support/agent-machine",
    );
    expect(workspaceKey("/home/ana/src/app")).toMatch(/^home-ana-src-app-[0-9a-f]{8}$/);
    // Paths that read alike never share sessions.
    expect(workspaceKey("/home/ana/src/my app")).not.toBe(workspaceKey("/home/ana/src/my-app"));
    expect(sessionsRoot("/w", { XDG_DATA_HOME: "/d" })).toBe(
      `/d/agent-machine/sessions/${workspaceKey("/w")}`,
    );
    expect(sessionsRoot("/w", {}, "s")).toBe("/w/s");
  });
});
