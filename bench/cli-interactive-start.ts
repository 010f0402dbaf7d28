// Wall time from starting `agent-machine` in a pseudo-terminal to its input line (`›`), in a
// workspace with project rules (AGENTS.md and CLAUDE.md, 4.5 KB and 2.2 KB) and in an empty one,
// on the scripted model. Run: node --import tsx bench/cli-interactive-start.ts [main.js of another build]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import pty from "@lydell/node-pty";

const RUNS = 10;
const main = process.argv[2] ?? path.resolve("dist/cli/main.js");
const script = path.resolve("test/fixtures/cli-script.mjs");
const home = mkdtempSync(path.join(tmpdir(), "am-start-"));

function startOnce(cwd: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = pty.spawn(process.execPath, [main, "--no-sandbox"], {
      cols: 120,
      rows: 40,
      cwd,
      env: { ...process.env, AGENT_MACHINE_SCRIPT: script, XDG_DATA_HOME: home, XDG_CONFIG_HOME: home },
    });
    let seen = "";
    const timer = setTimeout(() => reject(new Error(`no prompt: ${seen}`)), 20_000);
    child.onData((data) => {
      seen += data;
      if (!seen.includes("›")) return;
      clearTimeout(timer);
      const ms = performance.now() - started;
      child.kill();
      resolve(ms);
    });
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const withRules = path.join(home, "with-rules");
const without = path.join(home, "without");
mkdirSync(withRules);
mkdirSync(without);
writeFileSync(
  path.join(withRules, "AGENTS.md"),
  `# Rules\n${"- Use tabs, run the tests before saying done.\n".repeat(100)}`,
);
writeFileSync(path.join(withRules, "CLAUDE.md"), `# Claude rules\n${"- Prefer small edits.\n".repeat(100)}`);
try {
  for (const [name, cwd] of [
    ["with rules", withRules],
    ["without", without],
  ] as const) {
    await startOnce(cwd); // warm-up
    const times: number[] = [];
    for (let i = 0; i < RUNS; i++) times.push(await startOnce(cwd));
    console.log(
      `${name.padEnd(12)} median ${median(times).toFixed(0)} ms to the input line (min ${Math.min(...times).toFixed(0)}, max ${Math.max(...times).toFixed(0)}; ${RUNS} runs)`,
    );
  }
} finally {
  rmSync(home, { recursive: true, force: true });
}
