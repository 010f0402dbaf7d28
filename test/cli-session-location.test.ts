import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { moveLegacySessions, sessionsRoot, userDataDir, workspaceKey } from "../cli/session-location.js";
import { removeDir, tempDir } from "./fixtures/cli-harness.js";

describe("the sessions' folder", () => {
  let dir: string | undefined;
  afterEach(() => removeDir(dir));

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

  it("a move never overwrites a session already at the new place, and leaves links and files alone", () => {
    dir = tempDir();
    const cwd = path.join(dir, "ws");
    const old = path.join(cwd, ".agent-machine", "sessions");
    const root = path.join(dir, "data");
    for (const id of ["a-1", "b-2"]) {
      mkdirSync(path.join(old, id), { recursive: true });
      writeFileSync(path.join(old, id, "meta.json"), `old ${id}`);
    }
    mkdirSync(path.join(root, "b-2"), { recursive: true });
    writeFileSync(path.join(root, "b-2", "meta.json"), "new b-2");
    mkdirSync(path.join(dir, "elsewhere"));
    symlinkSync(path.join(dir, "elsewhere"), path.join(old, "c-3"));
    const move = moveLegacySessions(cwd, root)!;
    expect(move.moved).toEqual(["a-1"]);
    expect(move.left.map((entry) => entry.id).sort()).toEqual(["b-2", "c-3"]);
    expect(readFileSync(path.join(root, "a-1", "meta.json"), "utf8")).toBe("old a-1");
    expect(readFileSync(path.join(root, "b-2", "meta.json"), "utf8")).toBe("new b-2");
    expect(readFileSync(path.join(old, "b-2", "meta.json"), "utf8")).toBe("old b-2");
    expect(readdirSync(old).sort()).toEqual(["b-2", "c-3"]);
    expect(moveLegacySessions(path.join(dir, "nothing-here"), root)).toBeUndefined();
  });
});
