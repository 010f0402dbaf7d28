import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseArgs, UsageError } from "../cli/args.js";
import { chooseBashSetup, codingToolsFor } from "../cli/sandbox.js";
import { runTool } from "./fixtures/tools-helpers.js";

const available = { available: true as const, bwrap: "/usr/bin/bwrap" };
const missing = { available: false as const, reason: "bubblewrap (bwrap) was not found on PATH." };
const dir = mkdtempSync(path.join(tmpdir(), "am-cli-sandbox-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the command's bash sandbox", () => {
  it("is on by default, network off; --no-sandbox and --allow-network change that", () => {
    expect(parseArgs([])).toMatchObject({ sandbox: true, allowNetwork: false });
    expect(parseArgs(["--no-sandbox"]).sandbox).toBe(false);
    expect(parseArgs(["--allow-network"]).allowNetwork).toBe(true);
    expect(() => parseArgs(["--no-sandbox", "--allow-network"])).toThrow(UsageError);
  });

  it("sandboxes bash when bubblewrap works, and says what that means", () => {
    const setup = chooseBashSetup(parseArgs([]), { kind: "real" }, available);
    expect(setup).toMatchObject({ kind: "sandboxed", network: false });
    expect(setup.notice).toMatch(/writes only in the workspace and a private \/tmp, no network/);
    expect(chooseBashSetup(parseArgs(["--allow-network"]), { kind: "real" }, available)).toMatchObject({
      kind: "sandboxed",
      network: true,
    });
  });

  it("refuses bash calls with a real model when bubblewrap is missing, and the model is told why", async () => {
    const setup = chooseBashSetup(parseArgs([]), { kind: "real" }, missing);
    expect(setup.kind).toBe("refused");
    expect(setup.notice).toBe(
      "No bash sandbox, so bash commands are refused: bubblewrap (bwrap) was not found on PATH. Install bubblewrap (apt-get install bubblewrap) or pass --no-sandbox.",
    );
    const bash = codingToolsFor(dir, setup).find((tool) => tool.name === "bash")!;
    const run = await runTool(bash, { command: "touch ran" });
    expect(run.isError).toBe(true);
    expect(run.text).toMatch(/^bash is unavailable: commands run only in an OS sandbox/);
    expect(run.text).toContain("--no-sandbox");
  });

  it("lets the demo's own commands run unsandboxed without bubblewrap, saying so", () => {
    const setup = chooseBashSetup(parseArgs([]), { kind: "demo" }, missing);
    expect(setup).toMatchObject({ kind: "unsandboxed", warn: true });
    expect(setup.notice).toMatch(
      /^No bash sandbox: bubblewrap .* not found.*demo's own scripted commands run unsandboxed/,
    );
  });

  it("runs bash unsandboxed with --no-sandbox, without even looking for bubblewrap", () => {
    const setup = chooseBashSetup(parseArgs(["--no-sandbox"]), { kind: "real" });
    expect(setup).toMatchObject({ kind: "unsandboxed", warn: false });
    expect(codingToolsFor(dir, setup).map((t) => t.name)).toContain("bash");
  });
});
