import { execFile } from "node:child_process";
import { accessSync, constants } from "node:fs";
import * as path from "node:path";

/** The image formats asked of the clipboard, best first. */
const IMAGE_TYPES = ["image/png", "image/jpeg", "image/webp", "image/gif"];

/** A clipboard tool: how to list what the clipboard holds and how to read one type of it. */
interface ClipboardTool {
  name: string;
  /** The clipboard's types, one a line; absent when the tool reads only PNG. */
  types?: string[];
  read(type: string): string[];
}

const TOOLS: ClipboardTool[] = [
  {
    name: "wl-paste",
    types: ["--list-types"],
    read: (type) => ["--no-newline", "--type", type],
  },
  {
    name: "xclip",
    types: ["-selection", "clipboard", "-t", "TARGETS", "-o"],
    read: (type) => ["-selection", "clipboard", "-t", type, "-o"],
  },
  // macOS: `brew install pngpaste`; it writes the clipboard's image as PNG.
  { name: "pngpaste", read: () => ["-"] },
];

/** The first executable called `name` on `PATH`, or `undefined`. */
function onPath(name: string, env: Record<string, string | undefined>): string | undefined {
  for (const dir of (env.PATH ?? "").split(path.delimiter)) {
    if (!dir) continue;
    const file = path.join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

function run(file: string, args: string[], env: Record<string, string | undefined>): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    execFile(
      file,
      args,
      { encoding: "buffer", timeout: 5_000, maxBuffer: 64 * 1024 * 1024, env },
      (error, stdout) => (error ? reject(error) : resolve(stdout)),
    );
  });
}

/** What {@link readClipboardImage} found: the image's bytes, or why there are none. */
export type ClipboardImage = { bytes: Buffer; tool: string } | { why: string };

/**
 * The image the clipboard holds (a screenshot copied, not a file), read with the first clipboard
 * tool on `PATH`: `wl-paste` (Wayland), `xclip` (X11) or `pngpaste` (macOS). Says why there is
 * none: no such tool installed (and which to install), or the clipboard holds no image.
 *
 * @example
 * ```ts
 * const read = await readClipboardImage(process.env);
 * if ("why" in read) console.log(read.why);
 * ```
 */
export async function readClipboardImage(env: Record<string, string | undefined>): Promise<ClipboardImage> {
  const found = TOOLS.map((tool) => ({ tool, file: onPath(tool.name, env) })).find((t) => t.file);
  if (!found) {
    return {
      why: "no clipboard tool to read an image with: install wl-clipboard (Wayland), xclip (X11) or pngpaste (macOS), or paste the image file's path",
    };
  }
  const { tool, file } = found;
  try {
    let type = "image/png";
    if (tool.types) {
      const listed = (await run(file!, tool.types, env)).toString("utf8").split(/\r?\n/);
      const offered = IMAGE_TYPES.find((candidate) => listed.includes(candidate));
      if (!offered) return { why: "the clipboard holds no image" };
      type = offered;
    }
    const bytes = await run(file!, tool.read(type), env);
    return bytes.length ? { bytes, tool: tool.name } : { why: "the clipboard holds no image" };
  } catch (error) {
    const message = (error as Error).message.split("\n")[0];
    return { why: `${tool.name} could not read the clipboard (${message})` };
  }
}
