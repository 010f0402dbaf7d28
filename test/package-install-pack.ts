import { execFile } from "node:child_process";
import { cpSync, symlinkSync } from "node:fs";
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
