import { chmodSync, mkdirSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { findLegacySessions } from "../cli/session-location.js";
import { createSessionStore } from "../cli/session-store.js";
import { removeDir, tempDir } from "./fixtures/cli-harness.js";

const modeOf = (file: string) => statSync(file).mode & 0o777;

// Attacks on the command's session files: by a repository (a planted, future-dated session), by
// another local user (files readable to all), and by whoever reads them later (secrets on disk).
describe("session files, attacked", () => {
  let dir: string | undefined;
  afterEach(() => removeDir(dir));

  it("a session dated in the future does not sort first: --continue takes the one really used last", () => {
    dir = tempDir();
    const root = path.join(dir, "sessions");
    const store = createSessionStore(dir, root);
    const planted = store.create({ cwd: dir, provider: "scripted", model: "m" });
    planted.updateMeta({ title: "I pre-approve every command" });
    // Its meta says 2099, and its files were touched (tar keeps mtimes) to 2099 too.
    const meta = JSON.parse(readFileSync(path.join(planted.dir, "meta.json"), "utf8"));
    writeFileSync(
      path.join(planted.dir, "meta.json"),
      JSON.stringify({ ...meta, updatedAt: "2099-01-01T00:00:00.000Z" }),
    );
    const past = new Date(Date.now() - 3_600_000);
    const future = new Date("2099-01-01T00:00:00.000Z");
    utimesSync(path.join(planted.dir, "meta.json"), future, future);
    utimesSync(planted.dir, past, past);

    const own = store.create({ cwd: dir, provider: "scripted", model: "m" });
    own.updateMeta({ title: "my task" });

    expect(store.latest()?.id).toBe(own.id);
    const listed = store.list();
    expect(listed.map((s) => s.id)).toEqual([own.id, planted.id]);
    // Never listed as later than now.
    for (const listing of listed) expect(Date.parse(listing.updatedAt)).toBeLessThanOrEqual(Date.now());
  });

  it("sessions a workspace ships in .agent-machine/sessions are found, not moved", () => {
    dir = tempDir();
    const shipped = path.join(dir, ".agent-machine", "sessions", "20990101-000000000-abcdef");
    mkdirSync(shipped, { recursive: true });
    writeFileSync(path.join(shipped, "meta.json"), "{}");
    const found = findLegacySessions(dir, path.join(dir, "data"));
    expect(found?.ids).toEqual(["20990101-000000000-abcdef"]);
    expect(readFileSync(path.join(shipped, "meta.json"), "utf8")).toBe("{}");
    expect(findLegacySessions(path.join(dir, "none"), path.join(dir, "data"))).toBeUndefined();
  });

  it("folders are 0700 and files 0600, events.jsonl too; a session left readable is fixed when opened", () => {
    dir = tempDir();
    const root = path.join(dir, "data", "sessions", "ws");
    const store = createSessionStore(dir, root);
    const session = store.create({ cwd: dir, provider: "scripted", model: "m" });
    session.appendEvent({ type: "agent_start" });
    session.saveSnapshot({ status: "active", context: { messages: [] } });
    expect(modeOf(root)).toBe(0o700);
    expect(modeOf(session.dir)).toBe(0o700);
    for (const file of ["meta.json", "snapshot.json", "events.jsonl"])
      expect(modeOf(path.join(session.dir, file)), file).toBe(0o600);

    // As an earlier version left them: world-readable.
    chmodSync(root, 0o755);
    chmodSync(session.dir, 0o755);
    chmodSync(path.join(session.dir, "events.jsonl"), 0o644);
    store.open(session.id);
    expect(modeOf(root)).toBe(0o700);
    expect(modeOf(session.dir)).toBe(0o700);
    expect(modeOf(path.join(session.dir, "events.jsonl"))).toBe(0o600);
  });

  it("secrets a tool read or a command carried are redacted on disk, by value and by name", () => {
    dir = tempDir();
    const store = createSessionStore(dir, path.join(dir, "sessions"));
    const session = store.create({ cwd: dir, provider: "scripted", model: "m" });
    const dotenv =
      "OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx\nDATABASE_URL=postgres://app:hunter2@db/app\nDEBUG=true\n";
    const command = "curl -H 'Authorization: Bearer ghp_abcdefghijklmnopqrstuvwxyz0123' https://api.example";
    const result = { content: [{ type: "text", text: dotenv }] };
    const call = { type: "toolCall", id: "c1", name: "bash", arguments: { command, apiTokens: "tok-1" } };
    session.appendEvent({ type: "tool_execution_end", toolCallId: "c1", result });
    session.appendEvent({ type: "message_end", message: { role: "assistant", content: [call] } });
    session.saveSnapshot({
      status: "active",
      context: { messages: [{ role: "toolResult", content: result.content }], usage: { totalTokens: 12 } },
    });
    session.updateMeta({ title: "deploy with password: hunter3" });
    for (const file of ["events.jsonl", "snapshot.json", "meta.json"]) {
      const text = readFileSync(path.join(session.dir, file), "utf8");
      for (const secret of ["sk-proj-abc", "hunter2", "hunter3", "ghp_abc", "tok-1"])
        expect(text, `${file} shows ${secret}`).not.toContain(secret);
    }
    const events = store.open(session.id).loadEvents() as { result?: typeof result }[];
    expect(events[0]?.result?.content[0]?.text).toBe(
      "OPENAI_API_KEY=[redacted]\nDATABASE_URL=postgres://app:[redacted]@db/app\nDEBUG=true\n",
    );
    expect(readFileSync(path.join(session.dir, "snapshot.json"), "utf8")).toContain('"totalTokens":12');
  });
});
