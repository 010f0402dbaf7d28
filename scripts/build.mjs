// The package's build (`npm run build`): declarations from `tsc`, JavaScript from Rollup, each
// TypeScript file turned into JavaScript by esbuild on the way.
//
// Each entry of package.json's `exports` (and the command, dist/cli/main.js) is one file at the path
// the exports name, as the AI SDK ships one file per entry (issue 44: a cold start pays for every
// file it loads). The entries are code-split, so a module two entries share lives once, in
// dist/chunks/, and `agent-machine` and `agent-machine/browser` hand out the same classes and the
// same price table. The shared code is grouped by audience rather than by every combination of
// entries that shares it (which made ~30 chunks for the main entry): `chunks/core-*.js` holds
// everything the browser entry needs, `chunks/node-*.js` what the main entry adds for Node alone,
// so `import("agent-machine")` reads three of our files and `agent-machine/browser` two. What the
// command's start (`--help`) needs stays out of both, so it does not read them. What stays as it was:
//
// - every package is left to Node's resolution (the dependencies, the optional peers an app may
//   lack, and the SDKs loaded on first use, whose `import()` stays an `import()`);
// - ES modules, one top-level statement per declaration, and `sideEffects: false`, so an app's
//   bundler still drops what the app does not use;
// - a source map beside each file, with the sources inlined (the package ships no .ts);
// - the declarations, still one .d.ts per source file under dist/, as `types` points to them.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import { rollup } from "rollup";

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

/** The entries a browser bundle may reach: every subpath that declares a `browser` condition. */
export function browserEntryNames(exportsMap) {
  const conditions = Object.values(exportsMap).filter((target) => target && typeof target === "object");
  return [
    ...new Set(conditions.filter((target) => "browser" in target).flatMap((t) => entryNames(t.browser))),
  ];
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

/** Our sources import `./x.js` for `./x.ts`, as Node's TypeScript resolution has it. */
const typescript = {
  name: "typescript",
  resolveId(source, importer) {
    if (!importer || !/^\.\.?\//.test(source) || !source.endsWith(".js")) return null;
    const file = resolve(dirname(importer), `${source.slice(0, -3)}.ts`);
    return existsSync(file) ? file : null;
  },
  async transform(code, id) {
    if (!id.endsWith(".ts")) return null;
    const out = await esbuild.transform(code, {
      loader: "ts",
      format: "esm",
      target: "es2022",
      sourcemap: "external",
      sourcesContent: true,
      sourcefile: id,
      tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true, useDefineForClassFields: true } },
    });
    return { code: out.code, map: out.map };
  },
};

/**
 * Every file written is ASCII. esbuild escapes the rest of the code but keeps some comments as
 * written, and one `…` in a comment made V8 hold the whole 450 KB core chunk as a two-byte string:
 * Node decodes it ~1 ms slower on every cold start, and V8 scans twice the bytes. A `\u` escape
 * is harmless in a comment (and means the same in a string, a regular expression or a name); it
 * moves only what follows it on its line, in a comment, so the source map is kept as it is.
 */
const asciiOnly = {
  name: "ascii-only",
  renderChunk(code) {
    if (!/[\u0080-\uffff]/.test(code)) return null;
    const escape = (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, "0")}`;
    // Without the `u` flag the class matches UTF-16 units, so a pair becomes two escapes.
    return { code: code.replace(/[\u0080-\uffff]/g, escape), map: null };
  },
};

const sourceOf = (name) => join(root, `${name}.ts`);
const bundle = await rollup({
  input: Object.fromEntries(entries.map((name) => [name, sourceOf(name)])),
  plugins: [typescript],
  // Packages and Node's built-ins: everything not one of our files.
  external: (id, importer) => importer !== undefined && !/^\.\.?\//.test(id) && !isAbsolute(id),
  // Our package.json says `sideEffects: false`: a module nothing uses is left out.
  treeshake: { moduleSideEffects: (_id, external) => external },
  onwarn(warning, warn) {
    if (warning.code !== "CIRCULAR_DEPENDENCY") warn(warning);
  },
});
await bundle.write({
  dir: outdir,
  format: "es",
  entryFileNames: "[name].js",
  chunkFileNames: "chunks/[name]-[hash].js",
  sourcemap: true,
  manualChunks: audienceChunks(),
  plugins: [asciiOnly],
});
await bundle.close();

/**
 * Rollup's `manualChunks`. The command's start (`--help`) reads only what it needs: the modules it
 * reaches go to `common` (those the browser entry reaches too) or `start`. Of the rest, a module the
 * browser entry reaches goes to `core`, one only the main entry (and entries without a browser
 * condition) reaches to `node`; anything else where Rollup puts it. Each group holds what its
 * modules import (a module's imports are reached from where it is), so no group imports a later one
 * and the browser's never import Node's.
 */
function audienceChunks() {
  const reached = new Map();
  /** The modules `entry` imports, directly or not, without the dynamic imports. */
  const reach = (entry, moduleInfo) => {
    if (!reached.has(entry)) {
      const seen = new Set();
      const stack = [sourceOf(entry)];
      while (stack.length > 0) {
        const id = stack.pop();
        if (seen.has(id)) continue;
        seen.add(id);
        const info = moduleInfo(id);
        if (info && !info.isExternal) stack.push(...info.importedIds);
      }
      reached.set(entry, seen);
    }
    return reached.get(entry);
  };
  const browserEntries = browserEntryNames(pkg.exports);
  return (id, { getModuleInfo }) => {
    const browser = reach("browser", getModuleInfo);
    if (reach("cli/main", getModuleInfo).has(id)) {
      if (id === sourceOf("cli/main")) return undefined;
      return browser.has(id) ? "common" : "start";
    }
    if (browser.has(id)) return "core";
    if (browserEntries.some((entry) => reach(entry, getModuleInfo).has(id))) return undefined;
    return reach("index", getModuleInfo).has(id) ? "node" : undefined;
  };
}
