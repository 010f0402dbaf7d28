// Node's modules load on first use, not with the package (issue 44).
const nodeFs = () => process.getBuiltinModule("node:fs");

/**
 * Bounds of every sandboxed command, so one command cannot starve the host. Sizes in MiB; a limit
 * of `Infinity` lifts it (a tmpfs then takes the kernel's default, half the RAM).
 */
export interface SandboxLimits {
  /** Size of the private `/tmp` (a tmpfs, in memory). */
  tmpMiB: number;
  /** Size of `/dev/shm` (shared memory, a tmpfs). */
  shmMiB: number;
  /** Size of the empty tmpfs that hides the home folder (caches tools write there are thrown away). */
  homeMiB: number;
  /** Memory each process may allocate (`RLIMIT_DATA`: heap and private mappings). */
  memoryMiB: number;
  /** Processes and threads of the command (`RLIMIT_NPROC`; counted per user, root is exempt). */
  processes: number;
  /** Largest file a command may write (`RLIMIT_FSIZE`); a larger write fails with `File size limit exceeded`. */
  fileSizeMiB: number;
}

/**
 * The default bounds: room for builds and test runs, not for a runaway command. Raise one with
 * `sandbox: { limits: { memoryMiB: 16384 } }` (the others keep their defaults).
 *
 * @example
 * ```ts
 * createBashTool({ workspace, sandbox: { limits: { tmpMiB: 4 * DEFAULT_SANDBOX_LIMITS.tmpMiB } } });
 * ```
 */
export const DEFAULT_SANDBOX_LIMITS: Readonly<SandboxLimits> = Object.freeze({
  tmpMiB: 1024,
  shmMiB: 64,
  homeMiB: 256,
  memoryMiB: 4096,
  processes: 1024,
  fileSizeMiB: 4096,
});

/** /run holds nothing but what the sandbox puts there (resolv.conf's bind). */
export const RUN_SIZE_BYTES = 1024 * 1024;

const MIB = 1024 * 1024;

/**
 * The defaults with `given` over them, each checked: a positive number (or `Infinity`), else a
 * `TypeError` naming the option.
 *
 * @example
 * ```ts
 * sandboxLimits({ processes: 256 }); // { ...DEFAULT_SANDBOX_LIMITS, processes: 256 }
 * ```
 */
export function sandboxLimits(given: Partial<SandboxLimits> | undefined): SandboxLimits {
  const limits = { ...DEFAULT_SANDBOX_LIMITS };
  if (given === undefined) return limits;
  if (typeof given !== "object" || given === null) {
    throw new TypeError(`sandbox limits: expected an object of limits, got ${JSON.stringify(given)}`);
  }
  for (const [key, value] of Object.entries(given)) {
    if (!(key in DEFAULT_SANDBOX_LIMITS)) {
      throw new TypeError(
        `sandbox limits.${key}: unknown limit (known: ${Object.keys(DEFAULT_SANDBOX_LIMITS).join(", ")})`,
      );
    }
    if (value === undefined) continue;
    if (typeof value !== "number" || Number.isNaN(value) || value <= 0) {
      throw new TypeError(
        `sandbox limits.${key}: expected a positive number (or Infinity for no limit), got ${JSON.stringify(value)}`,
      );
    }
    limits[key as keyof SandboxLimits] = value;
  }
  return limits;
}

/** Bytes of a MiB limit, or undefined for `Infinity`. */
export function limitBytes(mib: number): number | undefined {
  return Number.isFinite(mib) ? Math.floor(mib * MIB) : undefined;
}

/** The hard limits this process has, which an unprivileged child can lower but never raise. */
function hardLimits(): Record<string, number> {
  const hard: Record<string, number> = {};
  try {
    for (const line of nodeFs().readFileSync("/proc/self/limits", "utf8").split("\n").slice(1)) {
      const match = /^(.+?)\s{2,}(\S+)\s+(\S+)/.exec(line);
      if (match) hard[match[1]!] = match[3] === "unlimited" ? Infinity : Number(match[3]);
    }
  } catch {
    // Not Linux: the sandbox does not run there anyway.
  }
  return hard;
}

/**
 * The `prlimit` options that set the process, memory and file-size limits (soft and hard alike, so
 * the command cannot raise them), each capped at this process's own hard limit.
 *
 * @example
 * ```ts
 * prlimitArgs(DEFAULT_SANDBOX_LIMITS); // ["--nproc=1024:1024", "--data=4294967296:4294967296", ...]
 * ```
 */
export function prlimitArgs(limits: SandboxLimits): string[] {
  const hard = hardLimits();
  const option = (name: string, resource: string, value: number) => {
    const capped = Math.min(value, hard[resource] ?? Infinity);
    const text = Number.isFinite(capped) ? String(Math.floor(capped)) : "unlimited";
    return `--${name}=${text}:${text}`;
  };
  return [
    option("nproc", "Max processes", limits.processes),
    option("data", "Max data size", limits.memoryMiB * MIB),
    option("fsize", "Max file size", limits.fileSizeMiB * MIB),
  ];
}
