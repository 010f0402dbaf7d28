import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import type { ContextConfig } from "../context/config.js";
import type { Agent } from "../agent/create-agent.js";
import { type AgentMessage, textOf } from "../core/messages.js";
import type { ProviderRequest } from "../providers/provider.js";
import type { ScriptedStep } from "../providers/scripted.js";

/** The task the demo agent is given. */
export const DEMO_PROMPT = "The tests fail. Find out why and fix it.";

/** The line the demo "types" while the tests run: it reaches the model as a steering message. */
export const DEMO_STEERING = "Also add a line about the fix to CHANGELOG.md, please.";

/** A small budget, so the demo's long test log gets compacted before the last turn. */
export const DEMO_CONTEXT: ContextConfig = { maxContextTokens: 700, keepRecent: 4, toolOutputMaxLines: 12 };

const TEST_COUNT = 60;

/** The demo project's test script: a long log (something for compaction to truncate), then the failing test. */
const TEST_SCRIPT = `import { add, mul } from "./src/math.js";
let failed = 0;
for (let i = 1; i <= ${TEST_COUNT}; i++) {
  const ok = mul(i, 2) === i * 2;
  console.log(\`\${ok ? "ok" : "not ok"} \${i} - mul(\${i}, 2) is \${i * 2}\`);
  if (!ok) failed++;
}
const sum = add(2, 2);
console.log(\`\${sum === 4 ? "ok" : "not ok"} ${TEST_COUNT + 1} - add(2, 2) is 4 (got \${sum})\`);
if (sum !== 4) failed++;
console.log(failed ? \`\${failed} failed\` : "all passed");
process.exitCode = failed ? 1 : 0;
`;

/**
 * Creates the demo's temporary workspace: a tiny project whose `add` is off by one and whose test
 * script prints a long log (long enough for compaction to have something to truncate).
 *
 * @example
 * ```ts
 * const dir = createDemoWorkspace();
 * ```
 */
export function createDemoWorkspace(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "agent-machine-demo-"));
  mkdirSync(path.join(dir, "src"));
  writeFileSync(path.join(dir, "README.md"), "# calc\n\nA tiny calculator. `node test.js` runs the tests.\n");
  writeFileSync(
    path.join(dir, "src", "math.js"),
    "export function add(a, b) {\n  return a + b + 1;\n}\n\nexport function mul(a, b) {\n  return a * b;\n}\n",
  );
  writeFileSync(path.join(dir, "test.js"), TEST_SCRIPT);
  writeFileSync(path.join(dir, "package.json"), '{ "name": "calc", "type": "module" }\n');
  writeFileSync(path.join(dir, "CHANGELOG.md"), "# Changelog\n");
  return dir;
}

function lastUserText(messages: readonly AgentMessage[]): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role === "user") {
      return typeof message.content === "string" ? message.content : textOf(message.content);
    }
  }
  return undefined;
}

/**
 * The demo model: its n-th answer (`call`), worded by what it was sent (it repeats the steering
 * message it got). The call index, not the transcript, picks the step: compaction rewrites the
 * transcript the model sees.
 *
 * @example
 * ```ts
 * const provider = scripted(demoScript, { model: "demo" });
 * ```
 */
export function demoScript(request: ProviderRequest, call: number): ScriptedStep {
  const pace = { delayMs: 12, chunkSize: 6 };
  switch (call) {
    case 0:
      return {
        ...pace,
        text: "Let me look around first: the file list, the README, the source and a test run, all at once.\n",
        toolCalls: [
          { name: "list_files", arguments: { path: "." } },
          { name: "read_file", arguments: { path: "README.md" } },
          { name: "read_file", arguments: { path: "src/math.js" } },
          { name: "bash", arguments: { command: "sleep 1.5; node test.js", description: "node test.js" } },
        ],
      };
    case 1: {
      const note = lastUserText(request.messages);
      const heard = note && note !== DEMO_PROMPT ? `You said: "${note}" — will do. ` : "";
      return {
        ...pace,
        text: `${heard}The failing test is add(2, 2): src/math.js adds one too many. Fixing it${heard ? " and noting it in the changelog" : ""}.\n`,
        toolCalls: [
          {
            name: "edit_file",
            arguments: { path: "src/math.js", old_string: "return a + b + 1;", new_string: "return a + b;" },
          },
          ...(heard
            ? [
                {
                  name: "write_file",
                  arguments: {
                    path: "CHANGELOG.md",
                    content: "# Changelog\n\n- Fix add(): it returned a + b + 1.\n",
                  },
                },
              ]
            : []),
        ],
      };
    }
    case 2:
      return {
        ...pace,
        text: "Running the tests again.\n",
        toolCalls: [
          { name: "bash", arguments: { command: "node test.js | tail -n 2", description: "node test.js" } },
        ],
      };
    default:
      return {
        ...pace,
        text:
          "All tests pass now. The bug: `add` in src/math.js returned `a + b + 1`; it returns `a + b` now, " +
          "and CHANGELOG.md says so.",
      };
  }
}

/**
 * Plays the user's part of the demo: while the first test run is going, types a steering message.
 *
 * @example
 * ```ts
 * actDemoUser(agent, (text) => view.note(text));
 * ```
 */
export function actDemoUser(agent: Agent, note: (text: string) => void): () => void {
  let typed = false;
  let timer: NodeJS.Timeout | undefined;
  const subscription = agent.events$.subscribe((event) => {
    if (typed || event.type !== "tool_execution_start" || event.toolName !== "bash") return;
    typed = true;
    timer = setTimeout(() => {
      note(`(demo) you type while the tests run: ${DEMO_STEERING}`);
      agent.steer(DEMO_STEERING);
    }, 400);
  });
  return () => {
    subscription.unsubscribe();
    if (timer) clearTimeout(timer);
  };
}
