import { describe, expect, it } from "vitest";
import * as browser from "../browser.js";
import * as codingTools from "../coding-tools.js";
import * as main from "../index.js";
import * as mcp from "../mcp.js";
import * as visualizer from "../visualizer.js";

// The package's entries (docs/package.md): in Node, `agent-machine` is everything a library user
// gets; `agent-machine/browser` (what bundlers get for a web page) and the Node-only entries are its
// parts, so an app can import from any of them and mix them.
const parts = { browser, "coding-tools": codingTools, mcp, visualizer } as Record<
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
