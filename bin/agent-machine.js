#!/usr/bin/env node
// The `agent-machine` command. Installed as a package, it runs the compiled JavaScript in dist/
// (built by `prepare` before packing). In a clone it runs dist/ too when the build is newer than
// every source file it compiles, and otherwise the TypeScript sources through tsx (a
// devDependency), so an edit is never hidden behind a stale build and a clone needs no build step.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";

const root = new URL("../", import.meta.url);
const compiled = new URL("dist/cli/main.js", root);
const source = new URL("cli/main.ts", root);

if (existsSync(compiled) && (!existsSync(source) || buildIsCurrent(statSync(compiled).mtimeMs))) {
  await import(compiled.href);
} else {
  let register;
  try {
    ({ register } = await import("tsx/esm/api"));
  } catch {
    process.stderr.write(
      cwdIsGone()
        ? "agent-machine: The current directory no longer exists (it was deleted or moved): cd to one that does\n"
        : "agent-machine: no build to run (dist/ is missing or older than the sources) and no tsx to run the sources: run `npm run build`, or `npm install` for tsx\n",
    );
    process.exit(1);
  }
  register();
  await import(source.href);
}

/** No file the build compiles (tsconfig.build.json's `include`, less its `exclude`) changed after `builtAt`. */
function buildIsCurrent(builtAt) {
  let config;
  try {
    config = JSON.parse(readFileSync(new URL("tsconfig.build.json", root), "utf8"));
  } catch {
    return false;
  }
  const excluded = (config.exclude ?? []).map((entry) => entry.replace(/\/$/, ""));
  const isExcluded = (relative) =>
    excluded.some((entry) => relative === entry || relative.startsWith(`${entry}/`));
  for (const entry of config.include ?? []) {
    const url = new URL(entry, root);
    if (!existsSync(url)) continue;
    if (!statSync(url).isDirectory()) {
      if (statSync(url).mtimeMs > builtAt) return false;
      continue;
    }
    for (const file of readdirSync(url, { recursive: true })) {
      const relative = `${entry}/${file}`;
      if (!relative.endsWith(".ts") || isExcluded(relative)) continue;
      if (statSync(new URL(relative, root)).mtimeMs > builtAt) return false;
    }
  }
  return true;
}

/** The shell's directory was deleted under it: tsx cannot load then, and that is what to say. */
function cwdIsGone() {
  try {
    process.cwd();
    return false;
  } catch {
    return true;
  }
}
