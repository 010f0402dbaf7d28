// The workspace contract, as types: the sandbox root every file tool resolves its paths through.
// `createWorkspace` (the implementation) lives in tools/workspace.ts.

/** A path inside the workspace, resolved and checked. */
export interface ResolvedPath {
  /** Absolute path (symlinks in the parents resolved). */
  absolute: string;
  /** Path relative to the workspace root, with `/` separators; `.` for the root itself. */
  relative: string;
}

/** A sandbox root: every file tool resolves its paths through one. */
export interface Workspace {
  /** The workspace root, absolute and with symlinks resolved. */
  readonly root: string;
  /** Resolves `input` for reading: refuses anything outside the root (`..`, absolute paths, symlinks out). */
  resolve(input: string): Promise<ResolvedPath>;
  /** Like {@link Workspace.resolve}, and also refuses writes into `.git/`, `.husky/`, `node_modules/`. */
  resolveForWrite(input: string): Promise<ResolvedPath>;
  /** The workspace-relative form of an absolute path already known to be inside. */
  relative(absolute: string): string;
  /**
   * Writes the full output of a cut tool result to `<TOOL_OUTPUT_DIR>/<fileName>` (never over an
   * existing file) and returns its workspace-relative path, for `read_file` to page. Optional: a
   * workspace without it keeps cut outputs in the result's `details`.
   */
  saveToolOutput?(fileName: string, text: string): Promise<string>;
}
