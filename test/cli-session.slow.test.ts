import { spawn } from "node:child_process";
import { appendFileSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createSessionStore, writeFileAtomic } from "../cli/session-store.js";
import { REPO, removeDir, tempDir, waitUntil } from "./fixtures/cli-harness.js";

describe("the session store", () => {
  let dir: string | undefined;
  afterEach(() => removeDir(dir));

  it("a process killed while saving never leaves a corrupt snapshot behind", async () => {
    dir = tempDir();
    const file = path.join(dir, "snapshot.json");
    writeFileAtomic(file, JSON.stringify({ version: 0, check: 0 }));
    const storeModule = path.join(REPO, "cli", "session-store.ts");
    // Saves ever-new 1 MB snapshots as fast as it can, until killed.
    const writer = `
      const { writeFileAtomic } = await import(${JSON.stringify(storeModule)});
      const pad = "x".repeat(1 << 20);
      for (let v = 1; ; v++) {
        writeFileAtomic(${JSON.stringify(file)}, JSON.stringify({ version: v, pad, check: v }));
        if (v === 3) process.stdout.write("saving\\n");
      }`;
    for (let round = 0; round < 3; round++) {
      const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", writer], {
        cwd: REPO,
        stdio: ["ignore", "pipe", "inherit"],
      });
      let out = "";
      child.stdout.on("data", (chunk) => (out += chunk));
      await waitUntil(() => out.includes("saving"), "the writer to be saving");
      child.kill("SIGKILL");
      await new Promise((resolve) => child.once("exit", resolve));
      const saved = JSON.parse(readFileSync(file, "utf8"));
      expect(saved.version).toBeGreaterThanOrEqual(3);
      expect(saved.check).toBe(saved.version);
    }
    // Opening the session clears what the killed saves left half-written.
    const store = createSessionStore(dir);
    const session = store.create({ cwd: dir, provider: "scripted", model: "m" });
    writeFileSync(path.join(session.dir, ".snapshot.json.123.abcd.tmp"), '{"half');
    store.open(session.id);
    expect(readdirSync(session.dir).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });

  it("lists sessions newest first, opens by id, and skips a torn last line of the event log", () => {
    dir = tempDir();
    const store = createSessionStore(dir);
    const first = store.create({ cwd: dir, provider: "scripted", model: "m" });
    const second = store.create({ cwd: dir, provider: "scripted", model: "m" });
    second.updateMeta({ title: "the second" });
    expect(store.list().map((m) => m.id)).toEqual([second.id, first.id]);
    expect(store.latest()?.id).toBe(second.id);

    second.appendEvent({ type: "agent_start" });
    second.appendEvent({ type: "turn_start", turn: 1 });
    appendFileSync(path.join(second.dir, "events.jsonl"), '{"type":"turn_e'); // crash mid-append
    expect(store.open(second.id).loadEvents()).toEqual([
      { type: "agent_start" },
      { type: "turn_start", turn: 1 },
    ]);
    expect(store.open(second.id).meta.title).toBe("the second");

    second.saveSnapshot({ value: "idle" });
    expect(store.open(second.id).loadSnapshot()).toEqual({ value: "idle" });
    expect(readdirSync(second.dir).filter((f) => f.endsWith(".tmp"))).toEqual([]);

    expect(() => store.open("../etc")).toThrow('Invalid session id "../etc"');
    expect(() => store.open("nope-1")).toThrow(/No session "nope-1" .*recent: /);
    writeFileSync(path.join(store.root, "stray.txt"), "not a session");
    expect(store.list()).toHaveLength(2);
  });
});
