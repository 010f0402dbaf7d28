import { execFile } from "node:child_process";
import { cpSync, readFileSync, symlinkSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** This checkout. */
export const ROOT = fileURLToPath(new URL("..", import.meta.url));

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** The environment without what `npm test` adds for its own script (it would confuse a nested npm). */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^npm_(lifecycle|package)_|^INIT_CWD$|^(ANTHROPIC|OPENAI)_/.test(key)) continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

export function run(
  command: string,
  args: string[],
  cwd: string,
  extraEnv?: Record<string, string>,
  timeout = 240_000,
): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd, env: childEnv(extraEnv), maxBuffer: 64 * 1024 * 1024, timeout },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

export async function mustRun(
  command: string,
  args: string[],
  cwd: string,
  extraEnv?: Record<string, string>,
) {
  const result = await run(command, args, cwd, extraEnv);
  if (result.code !== 0) {
    throw new Error(
      `${command} ${args.join(" ")} exited ${result.code}:\n${result.stderr}\n${result.stdout}`,
    );
  }
  return result;
}

/**
 * `npm pack` of a copy of this checkout into `work`: sources, no dist/, this checkout's
 * node_modules (the build needs TypeScript), so `prepare` builds it as it does before a publish,
 * without touching this checkout's dist/. Returns the copy, the tarball's file name and its files.
 */
export async function packCheckout(
  work: string,
): Promise<{ source: string; filename: string; files: string[] }> {
  const source = join(work, "source");
  const skipped = new Set(["node_modules", "dist", ".git", "test-artifacts", "coverage", ".agent-machine"]);
  cpSync(ROOT, source, {
    recursive: true,
    filter: (from) => !skipped.has(relative(ROOT, from).split(sep)[0]!),
  });
  symlinkSync(join(ROOT, "node_modules"), join(source, "node_modules"), "dir");
  const packed = await mustRun("npm", ["pack", "--json", "--pack-destination", work], source);
  const [info] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf("["))) as {
    filename: string;
    files: { path: string }[];
  }[];
  return { source, filename: info!.filename, files: info!.files.map((file) => file.path) };
}

/**
 * An app's lock file: agent-machine from the tarball, and `dependencies` (with what they need) at
 * the versions of our own lock file. With it, `npm ci --offline` needs nothing but npm's cache,
 * which our own `npm ci` filled (without it, npm must ask the registry for version lists).
 * `dependencies` is the app's package.json field (agent-machine's entry included).
 */
export function appLockFile(tarball: string, dependencies: Record<string, string>): object {
  const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as {
    packages: Record<string, Record<string, unknown>>;
  };
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
  const root = lock.packages[""]!;
  const packages: Record<string, unknown> = {
    "": { name: "app", dependencies },
    "node_modules/agent-machine": {
      version: pkg.version,
      resolved: tarball,
      dependencies: root.dependencies,
      peerDependencies: root.peerDependencies,
      peerDependenciesMeta: root.peerDependenciesMeta,
      bin: root.bin,
      engines: root.engines,
      license: root.license,
    },
  };
  const wanted = dependencyClosure(
    lock.packages,
    Object.keys(dependencies).filter((name) => name !== "agent-machine"),
  );
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (!path.startsWith("node_modules/") || entry.link) continue;
    if (entry.dev && !wanted.has(path)) continue;
    const { devOptional: _devOptional, dev: _dev, ...rest } = entry;
    packages[path] = rest;
  }
  return { name: "app", lockfileVersion: 3, requires: true, packages };
}

/** The lock paths of `names` and of everything they depend on (dev packages in our lock). */
function dependencyClosure(packages: Record<string, Record<string, unknown>>, names: string[]): Set<string> {
  const found = new Set<string>();
  const visit = (name: string) => {
    const path = `node_modules/${name}`;
    if (found.has(path) || !packages[path]) return;
    found.add(path);
    for (const dependency of Object.keys((packages[path]!.dependencies as object) ?? {})) visit(dependency);
  };
  for (const name of names) visit(name);
  return found;
}
