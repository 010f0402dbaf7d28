import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import { afterAll, describe, expect, it } from "vitest";
import * as a2a from "../a2a.js";
import * as acp from "../acp.js";
import * as browser from "../browser.js";
import * as codingTools from "../coding-tools.js";
import * as main from "../index.js";
import * as mcp from "../mcp.js";
import * as mcpServer from "../mcp-server.js";
import * as react from "../react.js";
import * as testing from "../testing.js";
import * as visualizer from "../visualizer.js";
import * as wake from "../wake.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

// The package's entries (docs/package.md): in Node, `agent-machine` is everything a library user
// gets; `agent-machine/browser` (what bundlers get for a web page) and the Node-only entries are its
// parts, so an app can import from any of them and mix them.
const parts = { browser, "coding-tools": codingTools, mcp, visualizer, wake } as Record<
  string,
  Record<string, unknown>
>;

describe("the package's entries", () => {
  it("make up the main entry exactly: every export of it is in one part, and every part's export is in it", () => {
    const owners = new Map<string, string[]>();
    for (const [part, exports] of Object.entries(parts)) {
      for (const name of Object.keys(exports)) owners.set(name, [...(owners.get(name) ?? []), part]);
    }
    const missingFromParts = Object.keys(main).filter((name) => !owners.has(name));
    const missingFromMain = [...owners.keys()].filter((name) => !(name in main));
    const inTwoParts = [...owners].filter(([, where]) => where.length > 1).map(([name]) => name);
    expect({ missingFromParts, missingFromMain, inTwoParts }).toEqual({
      missingFromParts: [],
      missingFromMain: [],
      inTwoParts: [],
    });
  });

  it("export the same objects as the main entry (one class for instanceof, one price table, one machine)", () => {
    for (const exports of Object.values(parts)) {
      for (const [name, value] of Object.entries(exports)) {
        expect(value, name).toBe((main as Record<string, unknown>)[name]);
      }
    }
  });

  it("keep the Node-only tools out of the browser entry", () => {
    for (const name of [
      "codingTools",
      "createBashTool",
      "mcpTools",
      "visualize",
      "recordEvents",
      "createWorkspace",
    ]) {
      expect(browser, name).not.toHaveProperty(name);
      expect(main, name).toHaveProperty(name);
    }
  });
});

describe("the testing entry", () => {
  it("is the test kit, kept out of the main entry (apps do not load it)", () => {
    for (const name of ["scriptedModel", "runAgent", "runTool", "createTestClock", "startProviderServer"]) {
      expect(testing, name).toHaveProperty(name);
      expect(main, name).not.toHaveProperty(name);
    }
  });
});

describe("the acp entry", () => {
  it("serves agents over ACP, kept out of the main entry (editors start it as its own process)", () => {
    for (const name of ["serveAcp", "acpUpdateOf", "acpStopReason"]) {
      expect(acp, name).toHaveProperty(name);
      expect(main, name).not.toHaveProperty(name);
    }
  });
});

describe("the a2a entry", () => {
  it("serves an agent over A2A and calls remote A2A agents, kept out of the main entry", () => {
    for (const name of ["createA2aHandler", "agentCardOf", "a2aAgentTool"]) {
      expect(a2a, name).toHaveProperty(name);
      expect(main, name).not.toHaveProperty(name);
    }
  });
});

describe("the mcp-server entry", () => {
  it("serves agents as MCP tools, kept out of the main entry", () => {
    for (const name of ["createMcpAgentServer", "createMcpHttpHandler"]) {
      expect(mcpServer, name).toHaveProperty(name);
      expect(main, name).not.toHaveProperty(name);
    }
  });
});

describe("the react entry", () => {
  it("is kept out of the main entry (it needs React, an optional peer)", () => {
    for (const name of ["useAgent", "useAgentActions", "createAgentStore"]) {
      expect(react, name).toHaveProperty(name);
      expect(main, name).not.toHaveProperty(name);
    }
  });
});

describe("the browser entry", () => {
  afterAll(() => esbuild.stop());

  /** Bundles `source` (resolved from the repository root) as a web app would, minified. */
  async function bundleForBrowser(source: string) {
    const result = await esbuild.build({
      stdin: { contents: source, resolveDir: ROOT, loader: "ts" },
      bundle: true,
      platform: "browser",
      format: "esm",
      minify: true,
      write: false,
      metafile: true,
      logLevel: "silent",
    });
    // The files that put code in the bundle (the metafile also lists those tree-shaking dropped).
    const [output] = Object.values(result.metafile.outputs);
    return Object.entries(output!.inputs)
      .filter(([, input]) => input.bytesInOutput > 0)
      .map(([file]) => file);
  }

  it("bundles for the browser: nothing it reaches imports a node: module", async () => {
    // esbuild refuses node: built-ins on platform=browser, naming the file that imports one.
    const inputs = await bundleForBrowser(`export * from "./browser.ts";`);
    expect(inputs).toContain("agent/create-agent.ts");
  });

  it("bundles agent-machine/react for the browser too", async () => {
    const inputs = await bundleForBrowser(`export * from "./react.ts";`);
    expect(inputs).toContain("react/use-agent.ts");
  });

  it("lets an app that uses only the loop leave out the provider SDKs and zod's locales", async () => {
    const inputs = await bundleForBrowser(`
      import * as z from "zod";
      import { createAgent, defineTool, scripted } from "./browser.ts";
      const add = defineTool({ name: "add", description: "Adds", parameters: z.object({ a: z.number() }), execute: ({ a }) => String(a + 1) });
      createAgent({ provider: scripted([{ text: "hi" }]), tools: [add] }).prompt("hi");
    `);
    const packages = new Set(inputs.map((file) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file)?.[1]));
    expect(packages).not.toContain("openai");
    expect(packages).not.toContain("@anthropic-ai/sdk");
    // `import { z } from "zod"` in one of our modules would pull every locale (≈ 370 KB minified).
    const locales = inputs.filter((file) => file.includes("zod/v4/locales/"));
    expect(locales.map((file) => file.replace(/.*locales\//, ""))).toEqual(["en.js"]);
  });
});

describe("the chart entry", () => {
  it("is the visualizer's own chart, its types and its styles, shipped with the package", async () => {
    const { readFile } = await import("node:fs/promises");
    const pkg = JSON.parse(await readFile(`${ROOT}package.json`, "utf8")) as {
      exports: Record<string, string | Record<string, string>>;
      files: string[];
    };
    const entry = pkg.exports["./chart"] as Record<string, string>;
    const css = pkg.exports["./chart.css"] as string;
    for (const file of [entry.default!, entry.types!, css]) {
      expect(
        pkg.files.some((shipped) => file.slice(2).startsWith(shipped)),
        file,
      ).toBe(true);
    }
    // Resolved by the package's own name, as an app would (a variable: the typecheck resolves no self-reference).
    const specifier = "agent-machine/chart";
    const chart = (await import(specifier)) as typeof import("../visualizer/page/chart.js");
    const page = await import("../visualizer/page/chart.js");
    expect(chart.createChart).toBe(page.createChart);
    expect(await readFile(`${ROOT}${css.slice(2)}`, "utf8")).toContain(".chart .node.active > rect");
    // The page's styles take the chart's from that one file.
    expect(await readFile(`${ROOT}visualizer/page/style.css`, "utf8")).toMatch(
      /^@import url\("chart.css"\);/,
    );
  });
});
