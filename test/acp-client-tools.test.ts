// withAcpClient: the coding tools doing their I/O through an ACP client give the model the same
// results as our own tools on the same text, and the workspace rules are checked before the client.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type AcpClientAccess, withAcpClient } from "../acp.js";
import { codingTools, type Tool } from "../index.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const ctx = () => ({
  toolCallId: "c1",
  signal: new AbortController().signal,
  onUpdate: () => {},
  maxResultChars: 50_000,
});

const run = async (tools: Tool[], name: string, args: Record<string, unknown>) => {
  const tool = tools.find((t) => t.name === name)!;
  try {
    const result = await tool.execute(tool.parameters.parse(args), ctx() as never);
    return typeof result === "string" ? result : JSON.stringify(result.content);
  } catch (error) {
    return `error: ${(error as Error).message}`;
  }
};

function setup(text: string) {
  const cwd = mkdtempSync(path.join(tmpdir(), "am-acp-tools-"));
  dirs.push(cwd);
  writeFileSync(path.join(cwd, "f.txt"), text);
  const buffers = new Map([[path.join(cwd, "f.txt"), text]]);
  const asked: string[] = [];
  const client: AcpClientAccess = {
    readTextFile: async (p) => {
      asked.push(`read ${p}`);
      const found = buffers.get(p);
      if (found === undefined) throw new Error("not open");
      return found;
    },
    writeTextFile: async (p, content) => {
      asked.push(`write ${p}`);
      buffers.set(p, content);
    },
  };
  return {
    cwd,
    ours: codingTools({ cwd }),
    theirs: withAcpClient(codingTools({ cwd }), client, { cwd }),
    asked,
    buffers,
  };
}

describe("withAcpClient (the coding tools through an ACP client)", () => {
  const long =
    Array.from({ length: 30 }, (_, i) => `line ${i + 1}${i === 4 ? "x".repeat(3000) : ""}`).join("\n") + "\n";

  it.each([
    ["a whole file", {}],
    ["a page with more after it", { offset: 3, limit: 5 }],
    ["the last lines", { offset: 28 }],
    ["past the end", { offset: 40 }],
  ])("reads %s exactly as our read_file does", async (_, page) => {
    const { ours, theirs } = setup(long);
    expect(await run(theirs, "read_file", { path: "f.txt", ...page })).toBe(
      await run(ours, "read_file", { path: "f.txt", ...page }),
    );
  });

  it("reads an empty file and a CRLF file as ours does", async () => {
    for (const text of ["", "a\r\nb\r\n", "no newline at the end"]) {
      const { ours, theirs } = setup(text);
      expect(await run(theirs, "read_file", { path: "f.txt" })).toBe(
        await run(ours, "read_file", { path: "f.txt" }),
      );
    }
  });

  it("edits the client's text, with our errors when the old text is missing or ambiguous", async () => {
    const { cwd, theirs, asked, buffers } = setup("a b a\n");
    expect(await run(theirs, "edit_file", { path: "f.txt", old_string: "a", new_string: "c" })).toContain(
      "matches 2 times",
    );
    expect(await run(theirs, "edit_file", { path: "f.txt", old_string: "zz", new_string: "c" })).toContain(
      "0 matches",
    );
    expect(await run(theirs, "edit_file", { path: "f.txt", old_string: "b", new_string: "B" })).toContain(
      "Edited f.txt: 1 replacement",
    );
    expect(buffers.get(path.join(cwd, "f.txt"))).toBe("a B a\n");
    expect(asked.filter((a) => a.startsWith("write"))).toEqual([`write ${path.join(cwd, "f.txt")}`]);
  });

  it("refuses paths outside the workspace and writes into .git/ or node_modules/ before asking the client", async () => {
    const { theirs, asked } = setup("x");
    expect(await run(theirs, "read_file", { path: "../x" })).toContain("outside the workspace");
    expect(await run(theirs, "write_file", { path: ".git/config", content: "x" })).toContain("not allowed");
    expect(await run(theirs, "write_file", { path: "pkg/node_modules/a.js", content: "x" })).toContain(
      "not allowed",
    );
    expect(
      await run(theirs, "edit_file", { path: "/etc/passwd", old_string: "a", new_string: "b" }),
    ).toContain("outside the workspace");
    expect(asked).toEqual([]);
  });

  it("leaves a tool as ours where the client does not offer its side", async () => {
    const cwd = mkdtempSync(path.join(tmpdir(), "am-acp-tools-"));
    dirs.push(cwd);
    const tools = codingTools({ cwd });
    const read = withAcpClient(tools, { readTextFile: async () => "" }, { cwd });
    expect(read.find((t) => t.name === "write_file")).toBe(tools.find((t) => t.name === "write_file"));
    expect(read.find((t) => t.name === "edit_file")).toBe(tools.find((t) => t.name === "edit_file"));
    expect(read.find((t) => t.name === "read_file")).not.toBe(tools.find((t) => t.name === "read_file"));
    // A terminal is offered, but bash stays ours unless bashInTerminal says it may leave our sandbox.
    const terminal = withAcpClient(tools, { createTerminal: async () => ({}) as never }, { cwd });
    expect(terminal.find((t) => t.name === "bash")).toBe(tools.find((t) => t.name === "bash"));
  });
});
