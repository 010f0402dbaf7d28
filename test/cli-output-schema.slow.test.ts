import { writeFileSync } from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanEnv, removeDir, runCliProcess, tempDir } from "./fixtures/cli-harness.js";
import { type ProviderFixtureServer, startProviderServer } from "./fixtures/provider-server.js";
import { anthropicMessage } from "./fixtures/provider-wire.js";

const SCHEMA = {
  type: "object",
  properties: { severity: { type: "string", enum: ["low", "high"] }, summary: { type: "string" } },
  required: ["severity", "summary"],
  additionalProperties: false,
};

const answer = (text: string[]) => ({
  type: "sse" as const,
  frames: anthropicMessage({ blocks: [{ type: "text", text }] }),
});

// `agent-machine -p --output-schema file.json` through the real Anthropic provider path (the fixture
// server at ANTHROPIC_BASE_URL): the schema goes out as output_config.format, the object comes back
// printed as JSON.
describe("agent-machine --print --output-schema", () => {
  let server: ProviderFixtureServer | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await server?.close();
    removeDir(dir);
  });

  const run = (args: string[]) =>
    runCliProcess(["--print", "--model", "claude-fixture-1", ...args], {
      cwd: dir!,
      env: cleanEnv({ ANTHROPIC_API_KEY: "sk-ant-test-0123456789", ANTHROPIC_BASE_URL: server!.url }),
    });

  it("prints the validated object as JSON, after a repair", async () => {
    server = await startProviderServer();
    dir = tempDir();
    writeFileSync(path.join(dir, "triage.json"), JSON.stringify(SCHEMA));
    server.reply(
      answer(['{"severity":"urgent","summary":"x"}']),
      answer(['{"severity":"high",', '"summary":"red build"}']),
    );
    const result = await run(["--output-schema", "triage.json", "triage the build"]);
    expect(result.stderr).toBe("");
    expect(JSON.parse(result.stdout)).toEqual({ severity: "high", summary: "red build" });
    expect(result.code).toBe(0);
    expect(server.requests[0]!.body.output_config).toEqual({
      format: { type: "json_schema", schema: SCHEMA },
    });
    expect(JSON.stringify(server.requests[1]!.body.messages.at(-1))).toMatch(/does not match the schema/);
  });

  it("prints nothing on stdout and says why, with the last answer, when no valid object came", async () => {
    server = await startProviderServer();
    dir = tempDir();
    writeFileSync(path.join(dir, "triage.json"), JSON.stringify(SCHEMA));
    server.reply(answer(["not json"]), answer(["still not"]), answer(["never"]));
    const result = await run(["--output-schema", "triage.json", "triage the build"]);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(
      /no output: the run ended with reason "error": No valid output after 3 attempts/,
    );
    expect(result.stderr).toMatch(/the last answer was: never/);
    expect(result.code).toBe(1);
  });

  it("refuses a schema file that is missing or not JSON before any model call (exit 2)", async () => {
    server = await startProviderServer();
    dir = tempDir();
    writeFileSync(path.join(dir, "bad.json"), "{ nope");
    const missing = await run(["--output-schema", "missing.json", "x"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--output-schema: cannot read missing\.json/);
    const bad = await run(["--output-schema", "bad.json", "x"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/bad\.json is not JSON/);
    expect(server.requests).toHaveLength(0);
  });
});
