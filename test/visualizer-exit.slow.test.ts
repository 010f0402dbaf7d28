import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";

describe("closing the visualizer", () => {
  it("lets the process exit by itself once the page server, the recording and the inspector are closed", async () => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", join(import.meta.dirname, "visualizer-exit.fixture.ts")],
      {
        cwd: join(import.meta.dirname, ".."),
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    onTestFinished(() => {
      if (child.exitCode === null) child.kill();
    });
    let output = "";
    child.stdout.on("data", (data) => (output += data));
    child.stderr.on("data", (data) => (output += data));
    // The test's own timeout is the limit: a process kept alive by a leftover handle never exits.
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    expect(output).toContain("closed");
    expect(code).toBe(0);
  });
});
