import { defineConfig } from "vitest/config";

// Two projects: `unit` (fast, no browser, no child processes of note) and `slow`
// (browser, pseudo-terminal, fixture servers). `npm test` runs both.
export default defineConfig({
  test: {
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
