import { existsSync, mkdirSync } from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { sandboxSupport } from "../index.js";
import { cleanEnv, removeDir, runCliProcess, TEST_SCRIPT, tempDir } from "./fixtures/cli-harness.js";

const suite = sandboxSupport().available || process.env.CI ? describe : describe.skip;

describe("agent-machine's bash sandbox, end to end", () => {
  let dir: string | undefined;
  afterEach(() => removeDir(dir));
  const env = (extra: Record<string, string> = {}) =>
    cleanEnv({ AGENT_MACHINE_SCRIPT: TEST_SCRIPT, ...extra });

  /** A workspace two levels down, so `..` is an ordinary folder of the test's. */
  function workspace(): string {
    dir = tempDir();
    const ws = path.join(dir, "project");
    mkdirSync(ws);
    return ws;
  }
  const escape = "run: echo x > ../outside && echo wrote-outside";

  suite("with bubblewrap", () => {
    it("sandboxes bash by default: a write outside the workspace fails", async () => {
      const cwd = workspace();
      const result = await runCliProcess(["--print", "--permission-mode", "bypass", escape], {
        cwd,
        env: env(),
      });
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^tool results: bash: line 1: \.\.\/outside: Permission denied/);
      expect(existsSync(path.join(dir!, "outside"))).toBe(false);
    });

    it("--no-sandbox runs bash with the user's rights", async () => {
      const cwd = workspace();
      const result = await runCliProcess(["--print", "--permission-mode", "bypass", "--no-sandbox", escape], {
        cwd,
        env: env(),
      });
      expect(result.stdout).toMatch(/^tool results: wrote-outside/);
      expect(existsSync(path.join(dir!, "outside"))).toBe(true);
    });
  });

  it("without bubblewrap, says so on stderr and refuses bash calls instead of running them unsandboxed", async () => {
    const cwd = workspace();
    const result = await runCliProcess(["--print", "--permission-mode", "bypass", escape], {
      cwd,
      env: env({ PATH: path.join(dir!, "no-such-bin") }),
      sandbox: "default",
    });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(
      "No bash sandbox, so bash commands are refused: bubblewrap (bwrap) was not found on PATH.",
    );
    expect(result.stdout).toMatch(/^tool results: bash is unavailable: commands run only in an OS sandbox/);
    expect(existsSync(path.join(dir!, "outside"))).toBe(false);
  });
});
