// Times a sandboxed `git commit` of a small repository against plain bash (median of each).
// Run: npx tsx bench/sandbox-git-commit.ts [runs, default 10]
import { execSync } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { createBashTool } from "../index.js";
const runs = Number(process.argv[2] ?? 10);
const ws = realpathSync(mkdtempSync(path.join(tmpdir(), "am-commit-")));
execSync(
  "git init -q -b main && for i in $(seq 50); do echo $i > f$i; done && git add . && git -c user.name=a -c user.email=a@b commit -qm init",
  { cwd: ws, shell: "/bin/bash" },
);
const bash = createBashTool({ workspace: ws, sandbox: true });
const plain = createBashTool({ workspace: ws });
const ctx = () => ({
  toolCallId: "c",
  idempotencyKey: "c",
  signal: new AbortController().signal,
  onUpdate() {},
  onProgress() {},
});
async function time(tool: typeof bash, n: number) {
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const r = await tool.execute(
      {
        command: `echo ${i}-${Math.random()} >> f1 && git add f1 && git -c user.name=a -c user.email=a@b commit -qm c${i}`,
      } as never,
      ctx() as never,
    );
    ms.push(performance.now() - t);
    if ((r as { details?: { exitCode: number } }).details?.exitCode !== 0) throw new Error(JSON.stringify(r));
  }
  ms.sort((a, b) => a - b);
  return ms[Math.floor(n / 2)]!.toFixed(0);
}
try {
  console.log(
    `plain bash: median ${await time(plain, runs)} ms; sandboxed: median ${await time(bash, runs)} ms`,
  );
} finally {
  rmSync(ws, { recursive: true, force: true });
}
