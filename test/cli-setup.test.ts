import { mkdtempSync, rmdirSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { chooseModel, resolveWorkspace } from "../cli/setup.js";
import { startTracingForCli } from "../cli/telemetry.js";

// What the command says of the model it picked is printed on every start (and in the error when
// it cannot pick one): a password in OPENAI_BASE_URL must not be in it.
describe("chooseModel's reason", () => {
  const url = "http://me:hunter2pass@127.0.0.1:9/v1";
  const base = { print: true, demo: false, json: false, prompt: "hi" };

  it("names OPENAI_BASE_URL without the password it carries", async () => {
    const choice = await chooseModel(
      { ...base, model: "gpt-4o" },
      { OPENAI_API_KEY: "plain-key-123", OPENAI_BASE_URL: url },
    );
    expect(choice.kind).toBe("real");
    expect(choice.reason).toContain("OPENAI_BASE_URL=http://me:[redacted]@127.0.0.1:9/v1");
    expect(choice.reason).not.toContain("hunter2pass");
  });

  it("an OpenAI-compatible server's reason, and the error without a model, leave it out too", async () => {
    const served = await chooseModel({ ...base, model: "llama3" }, { OPENAI_BASE_URL: url });
    expect(served.kind).toBe("real");
    expect(served.reason).toBe(
      "Using llama3 at http://me:[redacted]@127.0.0.1:9/v1 (OpenAI-compatible server).",
    );
    const none = await chooseModel(base, { OPENAI_BASE_URL: url });
    expect(none.kind).toBe("none");
    expect(none.reason).toContain(
      "OPENAI_BASE_URL is set (http://me:[redacted]@127.0.0.1:9/v1) but no model",
    );
  });
});

// `git worktree remove`, a deleted checkout: the shell stays in a folder that is gone.
describe("resolveWorkspace in a current directory that was deleted", () => {
  it("says so (not Node's uv_cwd), and an absolute --cwd still works", () => {
    const before = process.cwd();
    const gone = mkdtempSync(path.join(tmpdir(), "am-gone-"));
    process.chdir(gone);
    rmdirSync(gone);
    try {
      expect(() => resolveWorkspace(undefined)).toThrow(
        "The current directory no longer exists (it was deleted or moved): cd to one that does, or pass --cwd <dir>",
      );
      expect(resolveWorkspace(before)).toBe(before);
    } finally {
      process.chdir(before);
    }
  });
});

describe("the traces notice", () => {
  it("names the collector without the credentials its URL carries", async () => {
    const { tracing, notice } = await startTracingForCli({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://me:s3cr3t-token@127.0.0.1:9",
    });
    await tracing?.shutdown(100);
    expect(notice).toBe("Traces: OTLP/HTTP to http://me:[redacted]@127.0.0.1:9/v1/traces");
  });
});
