// Lint rules: ESLint's and typescript-eslint's recommended sets; formatting is Prettier's job.
import js from "@eslint/js";
import globals from "globals";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", "test-artifacts/", "coverage/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none", ignoreRestSiblings: true },
      ],
      "@typescript-eslint/no-empty-function": "off",
      "@typescript-eslint/no-non-null-assertion": "off",
      "no-empty": ["error", { allowEmptyCatch: true }],
    },
  },
  {
    // The package's own code: under Node, rxjs's index is CommonJS that requires all ~220 of its
    // files (40-70 ms of a cold start). Its classes come from their own files, which the index
    // re-exports, so they are the classes an app gets from "rxjs" (issue 44). Tests, benches and
    // examples import "rxjs" as an app does.
    ignores: ["test/**", "bench/**", "examples/**", "visualizer/demo.ts"],
    rules: {
      "@typescript-eslint/no-restricted-imports": [
        "error",
        {
          paths: [
            {
              name: "rxjs",
              message:
                'Import values from "rxjs/internal/<Name>" (the index loads all of rxjs); types may come from "rxjs".',
              allowTypeImports: true,
            },
          ],
        },
      ],
    },
  },
  { files: ["visualizer/page/**/*.js"], languageOptions: { globals: { ...globals.browser } } },
  { files: ["examples/**/*.tsx"], languageOptions: { globals: { ...globals.browser } } },
);
