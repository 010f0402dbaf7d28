import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";

// Every example of docs/testing.md runs here as written: each ```ts block becomes a module whose
// package imports point at this checkout, and its tests are collected under its own describe.

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const doc = readFileSync(join(ROOT, "docs", "testing.md"), "utf8");
const blocks = [...doc.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!);

const ENTRIES: Record<string, string> = {
  "agent-machine/testing/vitest": "testing/vitest.ts",
  "agent-machine/testing": "testing.ts",
  "agent-machine/coding-tools": "coding-tools.ts",
  "agent-machine": "index.ts",
};

function localImports(source: string): string {
  return source.replace(
    /(from |import )"(agent-machine(?:\/[a-z/-]+)?)"/g,
    (whole, keyword: string, specifier: string) => {
      const file = ENTRIES[specifier];
      if (!file)
        throw new Error(`docs/testing.md imports ${specifier}, which the example runner does not map`);
      return `${keyword}${JSON.stringify(join(ROOT, file))}`;
    },
  );
}

const dir = join(ROOT, "test-artifacts", "doc-examples");
mkdirSync(dir, { recursive: true });

it("docs/testing.md has examples, each a test", () => {
  expect(blocks.length).toBeGreaterThanOrEqual(8);
  for (const block of blocks) expect(block).toMatch(/\bit\(/);
});

for (const [index, block] of blocks.entries()) {
  const heading = block.split("\n").find((line) => line.startsWith("it(")) ?? `example ${index + 1}`;
  describe(`docs/testing.md example ${index + 1}: ${heading.slice(4, 80)}`, async () => {
    const file = join(dir, `testing-example-${index + 1}.ts`);
    writeFileSync(file, localImports(block));
    await import(pathToFileURL(file).href);
  });
}
