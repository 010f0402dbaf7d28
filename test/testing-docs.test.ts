import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { writeDocExamples } from "./fixtures/doc-examples.js";

// Every example of docs/testing.md runs here as written: each ```ts block becomes a module whose
// package imports point at this checkout, and its tests are collected under its own describe.
// (test/testing-docs-types.slow.test.ts typechecks them.)

const examples = writeDocExamples("testing.md");

it("docs/testing.md has examples, each a test", () => {
  expect(examples.length).toBeGreaterThanOrEqual(10);
  for (const { source } of examples) expect(source).toMatch(/\bit\(/);
});

for (const [index, { file, source }] of examples.entries()) {
  const heading = source.split("\n").find((line) => line.startsWith("it(")) ?? "";
  describe(`docs/testing.md example ${index + 1}: ${heading.slice(4, 80)}`, async () => {
    await import(pathToFileURL(file).href);
  });
}
