import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createSessionStore } from "../cli/session-store.js";
import {
  cleanEnv,
  removeDir,
  runCliProcess,
  sessionsDirOf,
  TEST_SCRIPT,
  tempDir,
} from "./fixtures/cli-harness.js";

// What `--continue` picks and what the `--resume` list says must match what a resume gives the model.
describe("the sessions --continue and --resume offer", () => {
  let dir: string | undefined;
  afterEach(() => removeDir(dir));
  const env = () => cleanEnv({ AGENT_MACHINE_SCRIPT: TEST_SCRIPT });

  it("never resumes or lists an empty session (what /clear leaves)", async () => {
    dir = tempDir();
    const own = await runCliProcess(["--print", "my task"], { cwd: dir, env: env() });
    expect(own.code).toBe(0);
    // `/clear` starts a new session at once (store.create, as here); nothing is typed in it.
    const root = sessionsDirOf(dir);
    const empty = createSessionStore(dir, root).create({ cwd: dir, provider: "scripted", model: "m" });

    const resumed = await runCliProcess(["--print", "--continue", "go on"], { cwd: dir, env: env() });
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toBe("heard: go on\n");
    expect(resumed.stderr).toMatch(/Resumed session \S+: 2 messages · .*first prompt: "my task"/);
    expect(resumed.stderr).not.toContain(empty.id);

    const listed = await runCliProcess(["--print", "--resume"], { cwd: dir, env: env() });
    expect(listed.stderr).toContain("my task");
    expect(listed.stderr).not.toContain(empty.id);
    expect(listed.stderr).not.toContain("(no prompt)");
    // The empty session is kept on disk (it is only passed over).
    expect(readdirSync(root)).toContain(empty.id);
  });

  it("counts in the --resume list the messages a resume gives the model (after a compaction too)", async () => {
    dir = tempDir();
    expect((await runCliProcess(["--print", "first"], { cwd: dir, env: env() })).code).toBe(0);
    expect((await runCliProcess(["--print", "--continue", "second"], { cwd: dir, env: env() })).code).toBe(0);
    const root = sessionsDirOf(dir);
    const [id] = readdirSync(root);
    // A compaction replaces the transcript's first turns; the event log keeps every message.
    const snapshotFile = path.join(root, id!, "snapshot.json");
    const snapshot = JSON.parse(readFileSync(snapshotFile, "utf8"));
    expect(snapshot.context.messages).toHaveLength(4);
    snapshot.context.messages = snapshot.context.messages.slice(2);
    writeFileSync(snapshotFile, JSON.stringify(snapshot));

    const listed = await runCliProcess(["--print", "--resume"], { cwd: dir, env: env() });
    expect(listed.stderr).toContain(`${id}`);
    expect(listed.stderr).toMatch(/ · 2 messages · /);

    const resumed = await runCliProcess(["--print", "--continue", "third"], { cwd: dir, env: env() });
    expect(resumed.stderr).toMatch(/Resumed session \S+: 2 messages/);
  });
});
