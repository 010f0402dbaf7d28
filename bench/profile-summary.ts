// Lists the functions with the most self time in a V8 CPU profile (node --cpu-prof or
// bench/profile.ts), and the share of time in xstate, garbage collection and our own files.
// Usage: npx tsx bench/profile-summary.ts <file.cpuprofile> [top=25]
import { readFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";

interface ProfileNode {
  id: number;
  children?: number[];
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
}

/** The parts of a V8 CPU profile the summary reads. */
export interface CpuProfile {
  nodes: ProfileNode[];
  samples?: number[];
  timeDeltas?: number[];
}

function areaOf(functionName: string, url: string): string {
  if (functionName === "(garbage collector)") return "garbage collection";
  if (functionName === "(idle)" || functionName === "(program)") return functionName;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
  if (pkg) return pkg;
  if (url.startsWith("file://")) return "agent-machine";
  return "node";
}

/**
 * The top functions by self time, and the time per area (xstate, rxjs, agent-machine, gc, node).
 *
 * @example
 * ```ts
 * console.log(summarizeProfile(JSON.parse(readFileSync("turns.cpuprofile", "utf8")), 20));
 * ```
 */
export function summarizeProfile(profile: CpuProfile, top = 25): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  // The profiler's own work (stopping it through node:inspector) is not the workload's.
  const excluded = new Set<number>();
  const exclude = (id: number) => {
    excluded.add(id);
    for (const child of byId.get(id)?.children ?? []) exclude(child);
  };
  for (const node of profile.nodes) if (node.callFrame.url === "node:inspector") exclude(node.id);
  const self = new Map<number, number>();
  const samples = profile.samples ?? [];
  samples.forEach((id, i) => {
    if (!excluded.has(id)) self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas?.[i] ?? 0));
  });
  let total = 0;
  const byFunction = new Map<string, number>();
  const byArea = new Map<string, number>();
  for (const [id, us] of self) {
    total += us;
    const { functionName, url, lineNumber, columnNumber } = byId.get(id)!.callFrame;
    const where = url.replace(/^.*node_modules\//, "").replace(`${pathToFileURL(process.cwd()).href}/`, "");
    const name = functionName || "(anonymous)";
    const key = where ? `${name} ${where}:${lineNumber + 1}:${columnNumber + 1}` : name;
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
    const area = areaOf(functionName, url);
    byArea.set(area, (byArea.get(area) ?? 0) + us);
  }
  const pct = (us: number) => `${((100 * us) / total).toFixed(1)} %`.padStart(7);
  const lines = [`${(total / 1000).toFixed(0)} ms sampled`];
  for (const [area, us] of [...byArea].sort((a, b) => b[1] - a[1]).slice(0, 8)) {
    lines.push(`${pct(us)}  ${area}`);
  }
  lines.push("top functions by self time:");
  for (const [key, us] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    lines.push(`${pct(us)}  ${(us / 1000).toFixed(0).padStart(6)} ms  ${key}`);
  }
  return lines.join("\n");
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [file, top] = process.argv.slice(2);
  if (!file) throw new Error("usage: npx tsx bench/profile-summary.ts <file.cpuprofile> [top]");
  console.log(summarizeProfile(JSON.parse(readFileSync(file, "utf8")) as CpuProfile, Number(top ?? 25)));
}
