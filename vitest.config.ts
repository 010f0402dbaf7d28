import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

// Two projects: `unit` (fast, no browser, no child processes of note) and `slow`
// (browser, pseudo-terminal, fixture servers). `npm test` runs both.
export default defineConfig({
  test: {
    // Vitest's default is one worker fewer than the cores: a single worker on a 2-core machine, where
    // the slow files mostly wait on child processes (npm, Restate, Chromium, a terminal). One worker
    // per core halves the suite's wall time there.
    maxWorkers: Math.max(availableParallelism(), 2),
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["test/**/*.test.ts"],
          exclude: ["test/**/*.slow.test.ts", "test/**/*.browser.test.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "slow",
          include: ["test/**/*.slow.test.ts", "test/**/*.browser.test.ts"],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
    ],
    testTimeout: 15_000,
  },
});
