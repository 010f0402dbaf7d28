import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { expect, it } from "vitest";
import { ROOT, writeDocExamples } from "./fixtures/doc-examples.js";

// The examples of docs/testing.md typecheck as written (strict, with the vitest matchers' types).

it("docs/testing.md's examples typecheck", { timeout: 180_000 }, () => {
  const examples = writeDocExamples("testing.md");
  const dir = join(ROOT, "test-artifacts");
  const config = join(dir, "tsconfig.doc-examples.json");
  writeFileSync(
    config,
    JSON.stringify({
      extends: "../tsconfig.json",
      compilerOptions: { noEmit: true, allowImportingTsExtensions: true },
      include: examples.map(({ file }) => relative(dir, file)),
    }),
  );
  const tsc = spawnSync(
    process.execPath,
    [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", config],
    {
      encoding: "utf8",
    },
  );
  expect(tsc.stdout).toBe("");
  expect(tsc.status).toBe(0);
});
