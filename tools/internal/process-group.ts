// Node's modules load on first use, not with the package (issue 44).
const nodeFs = () => process.getBuiltinModule("node:fs");

/** Fields of /proc/<pid>/stat after "pid (comm) ": comm may contain spaces, so split after the last ")". */
function procStat(pid: number | string): string[] | undefined {
  try {
    const stat = nodeFs().readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/**
 * Whether any process of the group `pgid` is still alive. Zombies do not count: where PID 1 does not
 * reap orphans (containers), killed members linger as zombies and would look alive to `kill(-pgid, 0)`.
 */
export function processGroupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
  if (process.platform !== "linux") return true;
  for (const entry of nodeFs().readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = procStat(entry);
    // fields[0] = state, fields[2] = process group id.
    if (fields && fields[2] === String(pgid) && fields[0] !== "Z") return true;
  }
  return false;
}

/** Whether the process `pid` is alive; a zombie (exited, not yet reaped) counts as dead. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
  if (process.platform !== "linux") return true;
  const fields = procStat(pid);
  return fields !== undefined && fields[0] !== "Z";
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

/**
 * Ends a whole process group: SIGTERM, then SIGKILL once `graceMs` has passed with any member still
 * alive. Resolves when the group is gone (or after the SIGKILL when it cannot be observed).
 *
 * @example
 * ```ts
 * const child = spawn("bash", ["-c", cmd], { detached: true });
 * await killProcessGroup(child.pid!, 2000);
 * ```
 */
export async function killProcessGroup(pgid: number, graceMs: number): Promise<void> {
  if (!processGroupAlive(pgid)) return;
  signalGroup(pgid, "SIGTERM");
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    if (!processGroupAlive(pgid)) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  signalGroup(pgid, "SIGKILL");
  for (let i = 0; i < 40 && processGroupAlive(pgid); i++) {
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
