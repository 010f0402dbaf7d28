import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { CLI_BIN, cleanEnv, TEST_SCRIPT } from "./fixtures/cli-harness.js";

// The shell's folder was deleted under it (`git worktree remove`, a checkout removed in another
// window), then the command is run there: it says that, not that tsx or the build is missing.
describe("agent-machine in a current directory that no longer exists", () => {
  it("says the directory is gone and exits 1", () => {
    const gone = mkdtempSync(path.join(tmpdir(), "am-gone-"));
    const result = spawnSync(
      "sh",
      ["-c", 'cd "$1" && rmdir "$1" && exec "$2" "$3" -p hi', "sh", gone, process.execPath, CLI_BIN],
      { env: cleanEnv({ AGENT_MACHINE_SCRIPT: TEST_SCRIPT }), encoding: "utf8", timeout: 30_000 },
    );
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(
      /^agent-machine: The current directory no longer exists \(it was deleted or moved\): cd to one that does/,
    );
    expect(result.stderr).not.toContain("tsx");
    expect(result.status).toBe(1);
  });
});
