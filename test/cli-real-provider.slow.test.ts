import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanEnv, removeDir, runCliProcess, sessionsDirOf, tempDir } from "./fixtures/cli-harness.js";
import { type ProviderFixtureServer, startProviderServer } from "./fixtures/provider-server.js";
import { anthropicMessage } from "./fixtures/provider-wire.js";

// The fixture server on 127.0.0.1 stands in for Anthropic's API: the CLI takes the real provider path
// (ANTHROPIC_API_KEY → providerFromEnv → the official SDK at ANTHROPIC_BASE_URL).
describe("agent-machine against a real provider's wire format", () => {
  let server: ProviderFixtureServer | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await server?.close();
    removeDir(dir);
  });

  it("streams a tool call and an answer over Anthropic's SSE format, and never writes the key anywhere", async () => {
    server = await startProviderServer();
    dir = tempDir();
    server.reply(
      {
        type: "sse",
        frames: anthropicMessage({
          blocks: [
            { type: "text", text: ["Reading ", "it."] },
            { type: "tool_use", id: "toolu_01", name: "read_file", json: ['{"path":', '"hello.txt"}'] },
          ],
        }),
      },
      {
        type: "sse",
        frames: anthropicMessage({ blocks: [{ type: "text", text: ["The file says ", "hi from disk."] }] }),
      },
    );
    const secret = "sk-ant-test-0123456789-secret";
    writeFileSync(path.join(dir, "hello.txt"), "hi from disk\n");
    // An explicit model: the SDK warns on stderr about deprecated ones (the default may become one).
    const result = await runCliProcess(
      ["--print", "--model", "claude-fixture-1", "what does hello.txt say?"],
      {
        cwd: dir,
        env: cleanEnv({ ANTHROPIC_API_KEY: secret, ANTHROPIC_BASE_URL: server.url }),
      },
    );
    expect(result.stderr).toBe("");
    expect(result.stdout).toBe("The file says hi from disk.\n");
    expect(result.code).toBe(0);

    // What the model was sent: the coding tools, then the tool result of the read.
    expect(server.requests).toHaveLength(2);
    const [first, second] = server.requests;
    expect(first!.path).toBe("/v1/messages");
    expect(first!.body.model).toBe("claude-fixture-1");
    expect(first!.body.tools.map((t: { name: string }) => t.name)).toEqual([
      "bash",
      "read_file",
      "write_file",
      "edit_file",
      "list_files",
      "grep",
      "glob",
    ]);
    const lastTurn = second!.body.messages.at(-1);
    expect(JSON.stringify(lastTurn)).toContain("hi from disk");

    // The session on disk never holds the key.
    const sessions = sessionsDirOf(dir);
    const [id] = readdirSync(sessions);
    for (const file of ["snapshot.json", "events.jsonl", "meta.json"]) {
      expect(readFileSync(path.join(sessions, id!, file), "utf8")).not.toContain(secret);
    }
  });
});
