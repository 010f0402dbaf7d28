// `agent-machine acp` driven by the AI SDK's HarnessAgent through `@ai-sdk/harness-acp`: the
// harness's own bridge (its real code, over its WebSocket) starts the command as the ACP agent it
// runs, in a sandbox that is a local folder (test/fixtures/local-harness-sandbox.ts).
import { chmodSync, rmSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CLI_BIN, DATA_HOME, SANDBOX_ARGS, TEST_SCRIPT, tempDir } from "./fixtures/cli-harness.js";
import { freePort, localHarnessSandbox } from "./fixtures/local-harness-sandbox.js";

const NODE_MAJOR = Number(process.versions.node.split(".")[0]);
const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

describe.skipIf(NODE_MAJOR < 22)(
  `agent-machine acp as a HarnessAgent's ACP agent (@ai-sdk/harness-acp needs Node 22+: skipped on Node ${NODE_MAJOR})`,
  () => {
    it(`answers a prompt through HarnessAgent.generate, and streams it through HarnessAgent.stream${NODE_MAJOR < 22 ? " (skipped: @ai-sdk/harness-acp needs Node 22+)" : ""}`, async () => {
      const { HarnessAgent } = await import("@ai-sdk/harness/agent");
      const { createACP } = await import("@ai-sdk/harness-acp");
      // What the install step puts on the implementation's PATH: the command of this clone.
      const bin = tempDir("am-harness-bin-");
      roots.push(bin);
      const wrapper = path.join(bin, "agent-machine");
      writeFileSync(
        wrapper,
        `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI_BIN)} "$@"\n`,
      );
      chmodSync(wrapper, 0o755);
      const port = await freePort();
      const harness = createACP({
        harnessId: "agent-machine",
        source: {
          type: "install-command",
          command: `mkdir -p "$HOME/.local/bin" && ln -sf ${JSON.stringify(wrapper)} "$HOME/.local/bin/agent-machine"`,
        },
        executable: "agent-machine",
        args: ["acp", ...SANDBOX_ARGS],
        env: { AGENT_MACHINE_SCRIPT: TEST_SCRIPT, XDG_DATA_HOME: DATA_HOME },
        modelMapping: { type: "session-config-option", path: "model" },
        port,
        startupTimeoutMs: 60_000,
      });
      const agent = new HarnessAgent({ harness, sandbox: localHarnessSandbox(port, roots) });
      const session = await agent.createSession();
      try {
        const result = await agent.generate({ session, prompt: "hello from the harness" });
        expect(result.text).toBe("heard: hello from the harness");
        // The same ACP session goes on: a streamed turn, its text in deltas, and a tool call.
        const streamed = await agent.stream({ session, prompt: "story" });
        let text = "";
        let deltas = 0;
        for await (const delta of streamed.textStream) {
          text += delta;
          deltas++;
        }
        expect(text.startsWith("s001 s002 s003")).toBe(true);
        expect(text.endsWith("s399 s400")).toBe(true);
        expect(deltas).toBeGreaterThan(10);
        const remembered = await agent.generate({ session, prompt: "what did you say" });
        expect(remembered.text).toBe("earlier: 400 words, last s399 s400");
      } finally {
        await session.destroy();
      }
    }, 120_000);
  },
);
