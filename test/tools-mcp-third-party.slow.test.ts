import { existsSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type McpToolSet, mcpTools } from "../index.js";
import { runTool, tempDir } from "./fixtures/tools-helpers.js";

// The reference filesystem server from the npm registry, started over stdio as a user would.
const repoRoot = path.join(path.dirname(fileURLToPath(import.meta.url)), "..");
// AM_MCP_FILESYSTEM_DIR points at an install elsewhere (to try the test before the package is a devDependency).
const packageDir =
  process.env.AM_MCP_FILESYSTEM_DIR ??
  path.join(repoRoot, "node_modules", "@modelcontextprotocol", "server-filesystem");
const installed = existsSync(path.join(packageDir, "package.json"));

function serverEntry(): string {
  const pkg = JSON.parse(readFileSync(path.join(packageDir, "package.json"), "utf8")) as {
    bin?: string | Record<string, string>;
    main?: string;
  };
  const bin = typeof pkg.bin === "string" ? pkg.bin : Object.values(pkg.bin ?? {})[0];
  return path.join(packageDir, bin ?? pkg.main ?? "dist/index.js");
}

describe.runIf(installed)(
  "mcpTools with @modelcontextprotocol/server-filesystem (runs when the package is installed)",
  () => {
    let set: McpToolSet;
    let dir: string;
    let cleanup: () => Promise<void>;

    beforeAll(async () => {
      ({ dir, cleanup } = await tempDir("am-mcp-fs-"));
      await writeFile(path.join(dir, "hello.txt"), "hello from disk\n");
      set = await mcpTools({
        command: process.execPath,
        args: [serverEntry(), dir],
        stderr: "ignore",
        prefix: "fs",
      });
    });
    afterAll(async () => {
      await set?.close();
      await cleanup?.();
    });

    it("lists the server's tools with their JSON Schemas", () => {
      const list = set.tools.find((t) => t.name === "fs__list_directory");
      expect(list).toBeDefined();
      expect(list!.jsonSchema).toMatchObject({ type: "object", properties: { path: { type: "string" } } });
    });

    it("calls a tool and maps its text result", async () => {
      const list = set.tools.find((t) => t.name === "fs__list_directory")!;
      const run = await runTool(list, { path: dir });
      expect(run.isError).toBe(false);
      expect(run.text).toContain("hello.txt");
    });

    it("maps the server's refusal (a path outside its allowed folders) to an error result", async () => {
      const list = set.tools.find((t) => t.name === "fs__list_directory")!;
      const run = await runTool(list, { path: "/etc" });
      expect(run.isError).toBe(true);
      expect(run.text).toMatch(/denied|outside|not allowed/i);
    });
  },
);
