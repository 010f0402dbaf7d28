// The package's build (`npm run build`): declarations from `tsc`, JavaScript from esbuild.
//
// Each entry of package.json's `exports` (and the command, dist/cli/main.js) is one file at the path
// the exports name, as the AI SDK ships one file per entry: a cold `import("agent-machine")` then
// reads a handful of files instead of ~280 small modules (issue 44). The entries are code-split, so a
// module two entries share lives once, in dist/chunks/, and `agent-machine` and
// `agent-machine/browser` hand out the same classes and the same price table. What stays as it was:
//
// - every package is left to Node's resolution (`packages: "external"`): the dependencies, the
//   optional peers an app may lack, and the SDKs loaded on first use, whose `import()` stays an
//   `import()`;
// - ES modules, one top-level statement per declaration, and `sideEffects: false`, so an app's
//   bundler still drops what the app does not use;
// - a source map beside each file, with the sources inlined (the package ships no .ts);
// - the declarations, still one .d.ts per source file under dist/, as `types` points to them.
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const outdir = join(root, "dist");

/** `./dist/x/y.js` → `x/y`, for every JavaScript file the exports map names under dist/. */
export function entryNames(exportsMap) {
  const names = new Set();
  const visit = (target) => {
    if (typeof target === "string") {
      const match = /^\.\/dist\/(.+)\.js$/.exec(target);
      if (match) names.add(match[1]);
    } else if (target && typeof target === "object") Object.values(target).forEach(visit);
  };
  visit(exportsMap);
  return [...names];
}

const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
// The command runs dist/cli/main.js (bin/agent-machine.js): an entry of its own.
const entries = [...entryNames(pkg.exports), "cli/main"];

rmSync(outdir, { recursive: true, force: true });

const tsc = spawnSync(
  process.execPath,
  [
    join(root, "node_modules", "typescript", "bin", "tsc"),
    "-p",
    "tsconfig.build.json",
    "--emitDeclarationOnly",
  ],
  { cwd: root, stdio: "inherit" },
);
if (tsc.status !== 0) {
  if (tsc.signal) console.error(`build: tsc was stopped by ${tsc.signal}`);
  process.exit(tsc.status ?? 1);
}

await esbuild.build({
  absWorkingDir: root,
  entryPoints: Object.fromEntries(entries.map((name) => [name, `${name}.ts`])),
  outdir,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "es2022",
  packages: "external",
  chunkNames: "chunks/[name]-[hash]",
  sourcemap: "linked",
  sourcesContent: true,
  tsconfig: "tsconfig.build.json",
  logLevel: "warning",
});
