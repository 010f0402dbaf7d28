import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createEditFileTool,
  createGrepTool,
  createReadFileTool,
  createWorkspace,
  createWriteFileTool,
  findRipgrep,
} from "../index.js";
import { runTool, tempDir } from "./fixtures/tools-helpers.js";

// A second process flips the folder `d` of the workspace between a real folder and a symlink to a
// folder outside, as fast as it can, while the file tools write, edit, read and search through it.
// Checking the path first and then writing by path lets a write land outside within a few hundred
// tries; the tools must not let a single byte out (nor show a single byte from outside), whatever
// the timing. The outcome is the same on every run: the outside folder is untouched.

const ROUNDS = 300;

/**
 * Flips `dir` between a real folder and a symlink to `outside` until killed. The writers may create
 * `dir` again while it is missing (write_file creates missing folders); the flipper then removes that
 * new folder (only ever a real folder inside the workspace, checked with lstat), so it keeps
 * flipping, and it puts edit.txt back when an edit raced it away.
 */
const FLIPPER = `
const fs = require("node:fs");
const [dir, parked, outside] = process.argv.slice(1);
const isRealDir = (p) => { try { return fs.lstatSync(p).isDirectory(); } catch { return false; } };
const removeRealDir = (p) => { if (isRealDir(p)) fs.rmSync(p, { recursive: true, force: true }); };
function flip() {
  for (;;) {
    try {
      if (isRealDir(dir)) {
        removeRealDir(parked);
        fs.renameSync(dir, parked);
      }
      try { fs.symlinkSync(outside, dir); } catch { removeRealDir(dir); try { fs.symlinkSync(outside, dir); } catch {} }
      for (let i = 0; i < 300; i++);
      try { if (fs.lstatSync(dir).isSymbolicLink()) fs.unlinkSync(dir); } catch {}
      try { fs.renameSync(parked, dir); } catch { removeRealDir(dir); try { fs.renameSync(parked, dir); } catch {} }
      if (isRealDir(dir) && !fs.existsSync(dir + "/edit.txt")) fs.writeFileSync(dir + "/edit.txt", "hello world\\n");
      for (let i = 0; i < 300; i++);
    } catch {}
  }
}
// The loop never yields, so it starts once "ready" is on its way.
process.send("ready", () => flip());
`;

let root: string;
let outside: string;
let flipper: ChildProcess | undefined;
let cleanups: (() => Promise<void>)[] = [];

async function listRecursive(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  return entries.map(String).sort();
}

async function startFlipper(name = "d"): Promise<void> {
  flipper = spawn(
    process.execPath,
    ["-e", FLIPPER, path.join(root, name), path.join(root, `${name}-parked`), outside],
    { stdio: ["ignore", "ignore", "inherit", "ipc"] },
  );
  await new Promise<void>((resolve) => flipper!.once("message", () => resolve()));
}

async function stopFlipper(): Promise<void> {
  if (!flipper || flipper.exitCode !== null || flipper.signalCode !== null) return;
  const exited = new Promise((resolve) => flipper!.once("exit", resolve));
  flipper.kill("SIGKILL");
  await exited;
}

beforeEach(async () => {
  const a = await tempDir("am-race-");
  const b = await tempDir("am-race-outside-");
  root = a.dir;
  outside = b.dir;
  cleanups = [a.cleanup, b.cleanup];
  await mkdir(path.join(root, "d"));
  await writeFile(path.join(root, "d", "edit.txt"), "hello world\n");
  await writeFile(path.join(root, "d", "notes.txt"), "inside notes\n");
  // The outside folder holds files with the same names, so a write or read that follows the
  // symlink would succeed there.
  await writeFile(path.join(outside, "edit.txt"), "hello world\n");
  await writeFile(path.join(outside, "notes.txt"), "OUTSIDE SECRET\n");
});

afterEach(async () => {
  await stopFlipper();
  for (const cleanup of cleanups) await cleanup();
});

/** An error the model can act on, not a raw system error with a /proc path. */
const CLEAR_ERROR =
  /changed while it was being opened|outside the workspace|File not found|is a directory|is not a regular file|Path not found|Folder not found/;

describe("file tools against a folder swapped for a symlink while they run", () => {
  it("never write, create or edit anything outside the workspace", async () => {
    const workspace = createWorkspace(root);
    const write = createWriteFileTool({ workspace });
    const edit = createEditFileTool({ workspace });
    await startFlipper();
    const outcomes = { written: 0, edited: 0, refused: 0 };
    const errors = new Set<string>();
    for (let i = 0; i < ROUNDS; i++) {
      const runs = await Promise.all([
        runTool(write, { path: `d/file-${i}.txt`, content: `leak ${i}\n` }),
        runTool(write, { path: `d/sub-${i}/deep/file.txt`, content: `leak ${i}\n` }),
        runTool(edit, { path: "d/edit.txt", old_string: "hello", new_string: "hello!" }),
        runTool(edit, { path: "d/edit.txt", old_string: "hello!", new_string: "hello" }),
      ]);
      for (const [index, run] of runs.entries()) {
        if (!run.isError) outcomes[index < 2 ? "written" : "edited"]++;
        else {
          outcomes.refused++;
          // Edits that race each other may legitimately find 0 matches.
          if (!/0 matches/.test(run.text)) errors.add(run.text.replace(/\d+/g, "N"));
        }
      }
    }
    await stopFlipper();

    expect(await listRecursive(outside)).toEqual(["edit.txt", "notes.txt"]);
    expect(await readFile(path.join(outside, "edit.txt"), "utf8")).toBe("hello world\n");
    expect(await readFile(path.join(outside, "notes.txt"), "utf8")).toBe("OUTSIDE SECRET\n");
    for (const error of errors) expect(error).toMatch(CLEAR_ERROR);
    // Every call was answered, one way or the other.
    expect(outcomes.written + outcomes.edited + outcomes.refused).toBe(ROUNDS * 4);
  });

  const engines = [false, ...(findRipgrep() ? [true] : [])];
  it.each(engines)("never read or search a file outside (grep with ripgrep: %s)", async (ripgrep) => {
    const workspace = createWorkspace(root);
    const read = createReadFileTool({ workspace });
    const grep = createGrepTool({ workspace, ripgrep });
    await startFlipper();
    const leaks: string[] = [];
    const unclear: string[] = [];
    let answered = 0;
    // rg is a process per search: fewer rounds keep the suite quick, the flipper is just as fast.
    const rounds = ripgrep ? ROUNDS / 3 : ROUNDS;
    for (let i = 0; i < rounds; i++) {
      const [readRun, grepRun, filesRun] = await Promise.all([
        runTool(read, { path: "d/notes.txt" }),
        runTool(grep, { pattern: "SECRET|notes" }),
        // Only the outside notes.txt contains SECRET: listing d/notes.txt here would be a leak.
        runTool(grep, { pattern: "SECRET", path: "d", files_only: true }),
      ]);
      for (const run of [readRun!, grepRun!, filesRun!]) {
        answered++;
        if (run.text.includes("OUTSIDE")) leaks.push(run.text);
        if (run.isError && !CLEAR_ERROR.test(run.text)) unclear.push(run.text);
      }
      if (/notes\.txt/.test(filesRun!.text)) leaks.push(filesRun!.text);
    }
    await stopFlipper();
    expect(leaks).toEqual([]);
    expect(unclear).toEqual([]);
    expect(answered).toBe(rounds * 3);
  });

  it("never spill a cut tool output outside (.agent-machine swapped for a symlink)", async () => {
    const workspace = createWorkspace(root);
    await mkdir(path.join(root, ".agent-machine/tool-output"), { recursive: true });
    await mkdir(path.join(outside, "tool-output"));
    await startFlipper(".agent-machine");

    for (let i = 0; i < ROUNDS; i++) {
      await workspace.saveToolOutput!(`out-${i}.txt`, `full output ${i}\n`).then(
        () => undefined,
        () => undefined,
      );
    }
    await stopFlipper();
    expect(await listRecursive(outside)).toEqual(["edit.txt", "notes.txt", "tool-output"]);
  });
});
