/**
 * Thrown when a path leaves the workspace or touches a protected folder. The model sees its message.
 *
 * @example
 * ```ts
 * try { await ws.resolve("../x"); } catch (e) { if (e instanceof WorkspaceError) console.log(e.message); }
 * ```
 */
export class WorkspaceError extends Error {
  override name = "WorkspaceError";
}
