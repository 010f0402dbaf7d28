// Who a CPU profile's time is spent for: each sample goes to the nearest frame of this repository's
// code on its stack (the file that made the call, whatever library or builtin ran it: a
// `ctx.set` serialising state counts for the file that set it), or, with none on the stack, to
// the library or runtime part it ran in (the Restate SDK driving its I/O, HTTP/2, GC, microtasks).
// For a durable round (bench/durable-cpu.ts, PROFILE=rounds) this splits the service's CPU into
// the agent's code, the durable layer's and what neither called.
// Usage: npx tsx bench/profile-owners.ts <file.cpuprofile> [top=30] [sessions=100]
import { readFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { CpuProfile } from "./profile-summary.js";

interface Frame {
  functionName: string;
  url: string;
}

/** Where a frame's code lives: a path of this repository, a package, or the runtime part. */
function placeOf(frame: Frame, root: string): { ours: boolean; place: string } {
  const { url, functionName } = frame;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
  if (pkg) return { ours: false, place: pkg };
  if (url.startsWith("file:"))
    return { ours: true, place: url.startsWith(root) ? url.slice(root.length) : url };
  if (url.startsWith("node:")) return { ours: false, place: url.split("/").slice(0, 2).join("/") };
  if (url.startsWith("wasm:")) return { ours: false, place: "wasm" };
  return { ours: false, place: url || functionName };
}

/** The checkout the profiled code ran from: the directory holding its bench/ (else the working directory). */
function checkoutOf(profile: CpuProfile): string {
  for (const { callFrame } of profile.nodes) {
    const at = callFrame.url.startsWith("file:") ? callFrame.url.lastIndexOf("/bench/") : -1;
    if (at >= 0 && !callFrame.url.includes("node_modules")) return callFrame.url.slice(0, at + 1);
  }
  return `${pathToFileURL(process.cwd()).href}/`;
}

/**
 * CPU time (µs) by owner: `byOwner` maps each repository file (or, for samples with none on
 * the stack, "(lib) <place>") to its time; `split` maps "<file> | <what ran>" for the repository's
 * files ("own" when the file's own code ran, or the package or runtime part it called).
 *
 * @example
 * ```ts
 * const { total, byOwner } = ownersOf(JSON.parse(readFileSync("durable-round.cpuprofile", "utf8")));
 * console.log(byOwner.get("durable/session-run.ts")! / total);
 * ```
 */
export function ownersOf(
  profile: CpuProfile,
  root = checkoutOf(profile),
): { total: number; byOwner: Map<string, number>; split: Map<string, number> } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const byOwner = new Map<string, number>();
  const split = new Map<string, number>();
  const add = (map: Map<string, number>, key: string, us: number) => map.set(key, (map.get(key) ?? 0) + us);
  let total = 0;
  (profile.samples ?? []).forEach((id, i) => {
    const us = profile.timeDeltas?.[i] ?? 0;
    const leaf = byId.get(id)!.callFrame;
    if (leaf.functionName === "(idle)") return;
    let owner: string | undefined;
    let called: string | undefined;
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)!.callFrame;
      // The profiler's own work (stopping it through node:inspector) is not the workload's.
      if (frame.url === "node:inspector") return;
      if (owner) continue;
      const { ours, place } = placeOf(frame, root);
      if (ours) owner = place;
      else if (called === undefined && frame.url) called = place;
    }
    total += us;
    const leafPlace = placeOf(leaf, root);
    if (owner) {
      add(byOwner, owner, us);
      add(split, `${owner} | ${leafPlace.ours ? "own" : (called ?? "own (builtins)")}`, us);
    } else add(byOwner, `(lib) ${leafPlace.place}`, us);
  });
  return { total, byOwner, split };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = process.argv[2];
  if (!file) {
    console.error("usage: npx tsx bench/profile-owners.ts <file.cpuprofile> [top=30] [sessions=100]");
    process.exit(1);
  }
  const top = Number(process.argv[3] ?? 30);
  const sessions = Number(process.argv[4] ?? 100);
  const { total, byOwner, split } = ownersOf(JSON.parse(readFileSync(file, "utf8")) as CpuProfile);
  const line = (key: string, us: number) =>
    `${(us / 1000).toFixed(1).padStart(8)} ms ${((100 * us) / total).toFixed(1).padStart(5)} %` +
    `${(us / 1000 / sessions).toFixed(2).padStart(7)} ms/session  ${key}`;
  const sorted = (map: Map<string, number>) => [...map].sort((a, b) => b[1] - a[1]);
  console.log(`busy ${(total / 1000).toFixed(0)} ms (${(total / 1000 / sessions).toFixed(2)} ms a session)`);
  const groups = new Map<string, number>();
  for (const [owner, us] of byOwner) {
    const group = owner.startsWith("(lib)") ? "no repository frame" : owner.split("/")[0]!;
    groups.set(group, (groups.get(group) ?? 0) + us);
  }
  console.log("by area:");
  for (const [key, us] of sorted(groups)) console.log(line(key, us));
  console.log("by owner:");
  for (const [key, us] of sorted(byOwner).slice(0, top)) console.log(line(key, us));
  console.log("durable/ files, by what ran:");
  for (const [key, us] of sorted(split)
    .filter(([key]) => key.startsWith("durable/"))
    .slice(0, top))
    console.log(line(key, us));
}
