// The rules for answers to waiting calls, as every side applies them (the agent, the host, the
// durable session, every AgentHandle): called directly, the way each side calls them.
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { AgentCallError, defineTool } from "../index.js";
import { answersRefusal, clientResultOf, editedArgsOf } from "../tools/call-answers.js";

const writeFile = defineTool({
  name: "write_file",
  description: "writes a file",
  parameters: z.object({ path: z.string() }),
  execute: async () => "written",
});
const toolNamed = (name: string) => (name === writeFile.name ? writeFile : undefined);
const waiting = {
  pendingApprovals: [{ toolCallId: "a1", toolName: "write_file", args: { path: "x" } }],
  pendingToolCalls: [{ toolCallId: "c1", toolName: "pick_color", args: {} }],
};

describe("answersRefusal", () => {
  it("takes well-formed answers to calls that wait for them", () => {
    expect(
      answersRefusal(
        [
          { toolCallId: "a1", approve: { args: { path: "y" } } },
          { toolCallId: "c1", result: "blue" },
        ],
        waiting,
        toolNamed,
      ),
    ).toBeUndefined();
    expect(answersRefusal([{ toolCallId: "a1", deny: {} }], waiting, toolNamed)).toBeUndefined();
    expect(
      answersRefusal([{ toolCallId: "c1", reject: { reason: "no" } }], waiting, toolNamed),
    ).toBeUndefined();
  });

  it("refuses edited arguments that fail the tool's schema, and an unknown tool's edit", () => {
    const refusal = answersRefusal(
      [{ toolCallId: "a1", approve: { args: { path: 42 } } }],
      waiting,
      toolNamed,
    );
    expect(refusal).toBeInstanceOf(AgentCallError);
    expect(refusal).toMatchObject({ status: 400, code: "refused" });
    expect(refusal!.message).toMatch(/fail the schema of tool write_file.*still waits for approval/s);
    expect(
      answersRefusal([{ toolCallId: "a1", approve: { args: { path: "y" } } }], waiting, () => undefined),
    ).toMatchObject({ code: "refused" });
  });

  it("refuses a client result of the wrong shape", () => {
    const refusal = answersRefusal(
      [{ toolCallId: "c1", result: { content: "blue" } as never }],
      waiting,
      toolNamed,
    );
    expect(refusal).toMatchObject({ status: 400, code: "refused" });
    expect(refusal!.message).toMatch(/resolveToolCall\("c1"\).*still waits for its result/);
  });

  it("answers not_found for a call that does not wait for that kind of answer", () => {
    expect(answersRefusal([{ toolCallId: "zz", deny: {} }], waiting, toolNamed)).toMatchObject({
      status: 404,
      code: "not_found",
    });
    // An approval for a client-run call, a result for a call that waits for approval.
    expect(answersRefusal([{ toolCallId: "c1", approve: {} }], waiting, toolNamed)).toMatchObject({
      code: "not_found",
    });
    expect(answersRefusal([{ toolCallId: "a1", result: "x" }], waiting, toolNamed)).toMatchObject({
      code: "not_found",
    });
  });

  it("refuses malformed answers and a call answered twice as bad_request", () => {
    const bad = (answers: unknown) => answersRefusal(answers as never, waiting, toolNamed)?.code;
    expect(bad("nope")).toBe("bad_request");
    expect(bad([null])).toBe("bad_request");
    expect(bad([{ approve: {} }])).toBe("bad_request");
    expect(bad([{ toolCallId: "a1", approve: {}, deny: {} }])).toBe("bad_request");
    expect(bad([{ toolCallId: "a1" }])).toBe("bad_request");
    expect(bad([{ toolCallId: "c1", reject: {} }])).toBe("bad_request");
    expect(bad([{ toolCallId: "a1", deny: { reason: 3 } }])).toBe("bad_request");
    expect(
      bad([
        { toolCallId: "a1", deny: {} },
        { toolCallId: "a1", approve: {} },
      ]),
    ).toBe("bad_request");
  });
});

describe("the words every side uses", () => {
  it("editedArgsOf parses valid arguments and says why it refuses the others", () => {
    expect(editedArgsOf("a1", "write_file", writeFile, { path: "y" })).toEqual({
      ok: true,
      args: { path: "y" },
    });
    const refused = editedArgsOf("a1", "write_file", writeFile, { path: 1 });
    expect(refused.ok).toBe(false);
  });

  it("clientResultOf takes text and ToolResults of text and images only", () => {
    expect(clientResultOf("blue")).toEqual({ content: [{ type: "text", text: "blue" }] });
    expect(typeof clientResultOf({ content: [{ type: "audio" }] })).toBe("string");
  });
});
