import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { defineTool } from "../index.js";

// zod 4 is a peer dependency: the app's own zod is the one defineTool reads. A zod 3 schema is
// refused with a clear error before zod 4's JSON Schema conversion trips over it.

/** What a zod 3 `z.object({ city: z.string() })` looks like from outside (no `_zod`), built without zod 3. */
function zod3Object() {
  return {
    _def: { typeName: "ZodObject", shape: () => ({ city: { _def: { typeName: "ZodString" } } }) },
    "~standard": { version: 1, vendor: "zod", validate: () => ({ value: {} }) },
    parse: (value: unknown) => value,
    safeParse: (value: unknown) => ({ success: true, data: value }),
  };
}

describe("zod 4, a peer dependency", () => {
  it("defineTool refuses a zod 3 schema, naming the tool and what to install", () => {
    expect(() =>
      defineTool({
        name: "weather",
        description: "Current weather",
        parameters: zod3Object() as never,
        execute: () => "sunny",
      }),
    ).toThrow(
      'defineTool "weather": parameters is a zod 3 schema; agent-machine needs zod 4, a peer dependency (npm i zod@^4, then import * as z from "zod")',
    );
  });

  it("and anything else that is not a zod 4 schema (a JSON Schema, nothing)", () => {
    const jsonSchema = { type: "object", properties: { city: { type: "string" } } };
    expect(() =>
      defineTool({ name: "w", description: "", parameters: jsonSchema as never, execute: () => "" }),
    ).toThrow(
      'defineTool "w": parameters must be a zod 4 schema, e.g. z.object({ city: z.string() }), got object',
    );
    expect(() =>
      defineTool({ name: "w", description: "", parameters: undefined as never, execute: () => "" }),
    ).toThrow(/parameters must be a zod 4 schema.*got undefined/);
  });

  it("a zod 4 schema is taken as before", () => {
    const tool = defineTool({
      name: "w",
      description: "",
      parameters: z.object({ city: z.string() }),
      execute: () => "",
    });
    expect(tool.jsonSchema).toMatchObject({ type: "object", properties: { city: { type: "string" } } });
  });

  it("package.json declares zod 4 as a (required) peer dependency, and the README says to install it", () => {
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
    expect(pkg.peerDependencies.zod).toMatch(/^\^4\./);
    expect(pkg.dependencies.zod).toBeUndefined();
    expect(pkg.peerDependenciesMeta?.zod?.optional).not.toBe(true);
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
    expect(readme).toMatch(/npm (i|install) agent-machine zod/);
  });
});
