import { existsSync, readdirSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  cleanEnv,
  removeDir,
  runCliProcess,
  sessionsDirOf,
  TEST_SCRIPT,
  tempDir,
} from "./fixtures/cli-harness.js";

// Sessions live in the user's data folder, keyed by workspace, not in the repository where they
// would get committed; a workspace's old `.agent-machine/sessions/` moves there once, without loss.
describe("where sessions are kept", () => {
  let dir: string | undefined;
  afterEach(() => removeDir(dir));
  const env = () => cleanEnv({ AGENT_MACHINE_SCRIPT: TEST_SCRIPT });
  const legacy = (cwd: string) => path.join(cwd, ".agent-machine", "sessions");
  const filesOf = (root: string, id: string) =>
    Object.fromEntries(
      ["meta.json", "snapshot.json", "events.jsonl"].map((name) => [
        name,
        readFileSync(path.join(root, id, name), "utf8"),
      ]),
    );

  it("--sessions-dir keeps them where it says", async () => {
    dir = tempDir();
    const result = await runCliProcess(["--print", "--sessions-dir", "my-sessions", "hi"], {
      cwd: dir,
      env: env(),
    });
    expect(result.code).toBe(0);
    expect(readdirSync(path.join(dir, "my-sessions"))).toHaveLength(1);
    expect(existsSync(sessionsDirOf(dir))).toBe(false);
  });

  it("moves an old repo-local folder to the data folder once, every file intact, and --continue goes on", async () => {
    dir = tempDir();
    // Two sessions where earlier versions kept them.
    for (const prompt of ["first task", "second task"]) {
      const made = await runCliProcess(["--print", "--sessions-dir", legacy(dir), prompt], {
        cwd: dir,
        env: env(),
      });
      expect(made.code).toBe(0);
      await new Promise((resolve) => setTimeout(resolve, 20)); // distinct, ordered ids
    }
    const ids = readdirSync(legacy(dir)).sort();
    expect(ids).toHaveLength(2);
    const before = Object.fromEntries(ids.map((id) => [id, filesOf(legacy(dir!), id)]));

    const resumed = await runCliProcess(["--print", "--continue", "go on"], { cwd: dir, env: env() });
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toBe("heard: go on\n");
    expect(resumed.stderr).toContain(
      `Moved 2 sessions of this workspace from ${legacy(dir)} to ${sessionsDirOf(dir)}`,
    );
    // The old folder is gone, and the workspace's .agent-machine with it (nothing else was in it).
    expect(existsSync(path.join(dir, ".agent-machine"))).toBe(false);
    const root = sessionsDirOf(dir);
    expect(readdirSync(root).sort()).toEqual(ids);
    // The older session is byte for byte what it was; the newer one went on from where it stood.
    expect(filesOf(root, ids[0]!)).toEqual(before[ids[0]!]);
    const continued = filesOf(root, ids[1]!);
    expect(continued["events.jsonl"].startsWith(before[ids[1]!]!["events.jsonl"]!)).toBe(true);
    expect(continued["events.jsonl"]).toContain("go on");
    expect(JSON.parse(continued["meta.json"]!).title).toBe("second task");

    // Once: the next start has nothing to move and says nothing of it.
    const again = await runCliProcess(["--print", "hello"], { cwd: dir, env: env() });
    expect(again.stderr).not.toContain("Moved");
    expect(readdirSync(root)).toHaveLength(3);

    // The list says when, what, how long and with which model, newest first.
    const list = await runCliProcess(["--resume", "--print"], { cwd: dir, env: env() });
    const entries = list.stderr.split("\n").filter((line) => /^ *\d+\. /.test(line));
    expect(entries).toHaveLength(3);
    expect(entries[0]).toMatch(
      /^ 1\. \S+ {2}\d{4}-\d\d-\d\d \d\d:\d\d {2}hello · 2 messages · cli-script\.mjs$/,
    );
    expect(entries[1]).toMatch(/^ 2\. \S+ {2}[\d-]+ [\d:]+ {2}second task · 4 messages · cli-script\.mjs$/);
    expect(entries[2]).toMatch(/^ 3\. \S+ {2}[\d-]+ [\d:]+ {2}first task · 2 messages · cli-script\.mjs$/);
  });
});
