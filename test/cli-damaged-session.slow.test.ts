import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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

// A session whose files were damaged (a disk full mid-write by another tool, a bad edit, a sync
// conflict): the command says which session and which file, what can be recovered and how, never
// resumes another session in its place, and never writes over the damaged files.

const env = cleanEnv({ AGENT_MACHINE_SCRIPT: TEST_SCRIPT });

function sessions(cwd: string): string[] {
  return readdirSync(sessionsDirOf(cwd)).sort();
}

const file = (cwd: string, id: string, name: string) => path.join(sessionsDirOf(cwd), id, name);

describe("damaged sessions", () => {
  let dir: string | undefined;
  afterEach(() => removeDir(dir));

  /** Two sessions: "first" (older) and "second" (the most recent). */
  async function twoSessions(): Promise<{ older: string; newer: string }> {
    dir = tempDir();
    expect((await runCliProcess(["-p", "first"], { cwd: dir, env })).code).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 20)); // distinct update times
    expect((await runCliProcess(["-p", "second"], { cwd: dir, env })).code).toBe(0);
    const [older, newer] = sessions(dir);
    return { older: older!, newer: newer! };
  }

  it("a damaged meta.json is reported by name, --continue never falls back to an older session, nothing is written", async () => {
    const { older, newer } = await twoSessions();
    writeFileSync(file(dir!, newer, "meta.json"), '{ "id": "not json');
    const olderEvents = readFileSync(file(dir!, older, "events.jsonl"), "utf8");
    const newerFiles = ["meta.json", "snapshot.json", "events.jsonl"].map((name) =>
      readFileSync(file(dir!, newer, name), "utf8"),
    );

    for (const args of [["--continue"], ["--resume", newer]]) {
      const run = await runCliProcess([...args, "-p", "go on"], { cwd: dir!, env });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`Session ${newer} is damaged: meta.json is not valid JSON (`);
      expect(run.stderr).toContain(file(dir!, newer, "meta.json"));
      expect(run.stderr).toContain("Nothing was changed: the damaged file is left as it is.");
      expect(run.stderr).toMatch(
        /What can be recovered: snapshot\.json is intact \(the transcript: 2 messages\)/,
      );
      expect(run.stderr).toContain(`agent-machine --recover ${newer}`);
      expect(run.stdout).toBe("");
    }
    // The older session was not resumed in its place, and no file of the damaged one changed.
    expect(readFileSync(file(dir!, older, "events.jsonl"), "utf8")).toBe(olderEvents);
    expect(
      ["meta.json", "snapshot.json", "events.jsonl"].map((name) =>
        readFileSync(file(dir!, newer, name), "utf8"),
      ),
    ).toEqual(newerFiles);
    expect(sessions(dir!)).toEqual([older, newer]);

    // The list shows it, marked, instead of leaving it out.
    const list = await runCliProcess(["--resume"], { cwd: dir!, env });
    expect(list.stderr).toMatch(new RegExp(`${newer} +\\(damaged: meta\\.json is not valid JSON`));
    expect(list.stderr).toContain(older);
  });

  it("a damaged snapshot.json names session and file, says what the event log holds, and --recover goes on from it", async () => {
    const { newer } = await twoSessions();
    const snapshotFile = file(dir!, newer, "snapshot.json");
    const damaged = readFileSync(snapshotFile, "utf8").slice(0, 60);
    writeFileSync(snapshotFile, damaged);

    const run = await runCliProcess(["--resume", newer, "-p", "go on"], { cwd: dir!, env });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`Session ${newer} is damaged: snapshot.json is not valid JSON (`);
    expect(run.stderr).toContain(snapshotFile);
    expect(run.stderr).toMatch(/What can be recovered: events\.jsonl holds \d+ events with 2 messages/);
    expect(readFileSync(snapshotFile, "utf8")).toBe(damaged);

    const recovered = await runCliProcess(["--recover", newer, "-p", "and now?"], { cwd: dir!, env });
    expect(recovered.code).toBe(0);
    // The script answers a user message with "heard: <text>": the new session went on.
    expect(recovered.stdout.trim()).toBe("heard: and now?");
    expect(readFileSync(snapshotFile, "utf8")).toBe(damaged);
    // A third session, the newest: the damaged one stays as it was.
    const created = sessions(dir!).at(-1)!;
    expect(sessions(dir!)).toHaveLength(3);
    expect(created > newer).toBe(true);
    const meta = JSON.parse(readFileSync(file(dir!, created, "meta.json"), "utf8"));
    expect(meta.title).toBe(`recovered from ${newer}: second`);
    // The recovered transcript (from the event log) came first: the earlier exchange, then the new one.
    const snapshot = JSON.parse(readFileSync(file(dir!, created, "snapshot.json"), "utf8"));
    const texts = snapshot.context.messages.map((m: { role: string; content: unknown }) =>
      typeof m.content === "string"
        ? m.content
        : (m.content as { text?: string }[]).map((p) => p.text ?? "").join(""),
    );
    expect(texts).toEqual(["second", "heard: second", "and now?", "heard: and now?"]);
    const log = readFileSync(file(dir!, created, "events.jsonl"), "utf8");
    expect(log).toContain(`"type":"session_recovered","from":"${newer}","source":"event log"`);
  });

  it("a deleted snapshot.json of a session with messages is damage too, never a resume with an empty transcript", async () => {
    const { newer } = await twoSessions();
    rmSync(file(dir!, newer, "snapshot.json"));

    const run = await runCliProcess(["--continue", "-p", "what did you say"], { cwd: dir!, env });
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain(`Session ${newer} is damaged: snapshot.json is missing.`);
    expect(run.stderr).toMatch(/What can be recovered: events\.jsonl holds \d+ events with 2 messages/);
    expect(run.code).toBe(1);
    const list = await runCliProcess(["--resume"], { cwd: dir!, env });
    expect(list.stderr).toMatch(new RegExp(`${newer} +\\(damaged: snapshot\\.json is missing\\)`));

    // The event log gives the transcript back: the model hears what was said before.
    const recovered = await runCliProcess(["--recover", newer, "-p", "what did you say"], { cwd: dir!, env });
    expect(recovered.stdout.trim()).toBe("earlier: 2 words, last heard: second");
    expect(recovered.code).toBe(0);
  });

  it("says so when nothing can be recovered", async () => {
    const { newer } = await twoSessions();
    writeFileSync(file(dir!, newer, "snapshot.json"), "{");
    writeFileSync(file(dir!, newer, "events.jsonl"), "garbage\n");
    const run = await runCliProcess(["--resume", newer, "-p", "x"], { cwd: dir!, env });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      "Nothing can be recovered from it: there is no intact snapshot and no event log.",
    );
    const recover = await runCliProcess(["--recover", newer, "-p", "x"], { cwd: dir!, env });
    expect(recover.code).toBe(1);
    expect(recover.stderr).toContain(`Nothing can be recovered from session ${newer}`);
  });
});
