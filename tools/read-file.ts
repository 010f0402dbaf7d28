import type { FileHandle } from "node:fs/promises";
import { z } from "zod";
import { lazy } from "../core/lazy.js";
import { checkOptionKeys } from "../core/option-keys.js";
import { defineTool, type Tool, type ToolResult } from "./define-tool.js";
import { openForReadInside } from "./internal/safe-fs.js";
import { toWorkspace, type Workspace } from "./workspace.js";

/** Options of {@link createReadFileTool}. */
export interface ReadFileToolOptions {
  /** Workspace root (a path) or a {@link Workspace}. */
  workspace: string | Workspace;
  /** Lines returned when the model gives no `limit`. Default 2 000. */
  defaultLimit?: number;
  /** Bytes kept of one line (whole characters only); the rest is cut with a marker. Default 2 000. */
  maxLineLength?: number;
  /** Largest image returned as image content. Default 5 MB. */
  maxImageBytes?: number;
}

/** `details` of a read_file result. */
export interface ReadFileDetails {
  path: string;
  /** First line shown (1-based). */
  offset: number;
  linesShown: number;
  /** More lines follow the ones shown. */
  hasMore: boolean;
  /** Set for images. */
  mimeType?: string;
}

const parameters = /* @__PURE__ */ lazy(() =>
  z.object({
    path: z.string().describe("File path, relative to the workspace root"),
    offset: z.number().int().min(1).optional().describe("First line to read, 1-based (default 1)"),
    limit: z.number().int().min(1).optional().describe("Number of lines to read (default 2000)"),
  }),
);

const IMAGE_SIGNATURES: { mimeType: string; matches: (head: Buffer) => boolean }[] = [
  { mimeType: "image/png", matches: (h) => h.subarray(0, 8).equals(Buffer.from("89504e470d0a1a0a", "hex")) },
  { mimeType: "image/jpeg", matches: (h) => h[0] === 0xff && h[1] === 0xd8 && h[2] === 0xff },
  { mimeType: "image/gif", matches: (h) => /^GIF8[79]a/.test(h.subarray(0, 6).toString("latin1")) },
  {
    mimeType: "image/webp",
    matches: (h) =>
      h.subarray(0, 4).toString("latin1") === "RIFF" && h.subarray(8, 12).toString("latin1") === "WEBP",
  },
];

const SNIFF_BYTES = 8192;

/**
 * The `read_file` tool: returns a text file with line numbers (`cat -n` style), paged by
 * `offset` / `limit`; PNG, JPEG, GIF and WebP images come back as image content; other binary files
 * are refused. It streams the file and stops after the requested page, so a 50 MB file costs no
 * more memory than the page shown.
 *
 * @example
 * ```ts
 * const read = createReadFileTool({ workspace: process.cwd() });
 * ```
 */
export function createReadFileTool(
  options: ReadFileToolOptions,
): Tool<z.output<ReturnType<typeof parameters>>, ReadFileDetails> {
  checkOptionKeys("createReadFileTool", options, {
    workspace: true,
    defaultLimit: true,
    maxLineLength: true,
    maxImageBytes: true,
  });
  const workspace = toWorkspace(options.workspace);
  const defaultLimit = options.defaultLimit ?? 2000;
  const maxLineLength = options.maxLineLength ?? 2000;
  const maxImageBytes = options.maxImageBytes ?? 5 * 1024 * 1024;

  return defineTool({
    name: "read_file",
    description: [
      "Reads a file of the workspace. Text comes back with line numbers;",
      `at most ${defaultLimit} lines per call (fewer when they are long): use offset and limit to page through long files.`,
      "PNG, JPEG, GIF and WebP images come back as images. Other binary files are refused.",
    ].join(" "),
    parameters: parameters(),
    readOnly: true,
    workspace,
    async execute(args, ctx): Promise<ToolResult<ReadFileDetails>> {
      const { absolute, relative } = await workspace.resolve(args.path);
      // Everything below reads through one descriptor verified to lie inside the workspace, so a
      // folder swapped for a symlink after the check above cannot show another file.
      const handle = await openForReadInside(workspace.root, absolute, relative).catch(
        (error: NodeJS.ErrnoException) => {
          if (error.code === "ENOENT") throw new Error(`File not found: ${args.path}`);
          if (error.code === "ENOTDIR") {
            throw new Error(`File not found: ${args.path} (a part of its path is a file, not a folder)`);
          }
          throw error;
        },
      );
      try {
        return await readOpenFile(handle, args, relative, ctx.signal, ctx.maxResultChars);
      } finally {
        await handle.close();
      }
    },
  });

  async function readOpenFile(
    handle: FileHandle,
    args: z.output<ReturnType<typeof parameters>>,
    relative: string,
    signal: AbortSignal,
    maxResultChars: number | undefined,
  ): Promise<ToolResult<ReadFileDetails>> {
    const info = await handle.stat();
    if (info.isDirectory()) throw new Error(`${args.path} is a directory; use list_files to see its entries`);
    if (!info.isFile()) throw new Error(`${args.path} is not a regular file`);

    const head = await readHead(handle);
    const image = IMAGE_SIGNATURES.find((signature) => signature.matches(head));
    if (image) {
      if (info.size > maxImageBytes) {
        throw new Error(
          `${args.path} is an image of ${info.size} bytes, larger than the ${maxImageBytes} bytes read_file returns`,
        );
      }
      const data = await handle.readFile();
      return {
        content: [{ type: "image", data: data.toString("base64"), mimeType: image.mimeType }],
        details: { path: relative, offset: 1, linesShown: 0, hasMore: false, mimeType: image.mimeType },
      };
    }
    if (head.includes(0)) {
      throw new Error(
        `${args.path} is a binary file (${info.size} bytes); read_file shows text files and PNG, JPEG, GIF or WebP images only`,
      );
    }

    const offset = args.offset ?? 1;
    const limit = args.limit ?? defaultLimit;
    const { lines, hasMore, reachedOffset } = await readLines(handle, {
      offset,
      limit,
      maxLineLength,
      signal,
    });
    if (!reachedOffset) {
      throw new Error(`${args.path} has fewer than ${offset} lines (offset ${offset} is past the end)`);
    }
    const page = fitPage(lines, offset, maxResultChars);
    let text = page.text;
    if (info.size === 0) text = "(empty file)";
    const more = hasMore || page.shown < lines.length;
    if (more) {
      const why = page.shown < lines.length ? "This page is as long as a result may be; more" : "More";
      text += `\n\n[${why} lines follow. Read on with offset=${offset + page.shown}.]`;
    }
    return {
      content: [{ type: "text", text }],
      details: { path: relative, offset, linesShown: page.shown, hasMore: more },
    };
  }
}

/**
 * The `read_file` result for a text already in memory (an ACP editor's buffer, say): the same page,
 * line numbers, cut lines and "read on" note as a file read from disk.
 *
 * @example
 * ```ts
 * readFileResultOfText("a\nb\n", "notes.txt", { offset: 2 }).content; // [{ type: "text", text: "     2\tb" }]
 * ```
 */
export function readFileResultOfText(
  text: string,
  relative: string,
  options: { offset?: number; limit?: number; maxLineLength?: number; maxResultChars?: number } = {},
): ToolResult<ReadFileDetails> {
  const offset = options.offset ?? 1;
  const limit = options.limit ?? 2000;
  const maxLineLength = options.maxLineLength ?? 2000;
  const all = text.split("\n");
  if (all.at(-1) === "") all.pop(); // a trailing newline ends the last line, it starts none
  if (offset > 1 && offset > all.length) {
    throw new Error(`${relative} has fewer than ${offset} lines (offset ${offset} is past the end)`);
  }
  const lines = all.slice(offset - 1, offset - 1 + limit).map((line) => {
    const clean = line.replace(/\r$/, "");
    if (clean.length <= maxLineLength) return clean;
    return `${clean.slice(0, maxLineLength)} [... line cut: ${Buffer.byteLength(clean.slice(maxLineLength))} more bytes]`;
  });
  const page = fitPage(lines, offset, options.maxResultChars);
  let shown = page.text;
  if (text === "") shown = "(empty file)";
  const more = offset - 1 + page.shown < all.length;
  if (more) {
    const why = page.shown < lines.length ? "This page is as long as a result may be; more" : "More";
    shown += `\n\n[${why} lines follow. Read on with offset=${offset + page.shown}.]`;
  }
  return {
    content: [{ type: "text", text: shown }],
    details: { path: relative, offset, linesShown: page.shown, hasMore: more },
  };
}

/** Room the "read on" note takes after the page. */
const NOTE_ROOM = 200;

/**
 * Numbers the lines (`cat -n` style) and stops before the page outgrows the result budget, so a
 * file is paged with `offset` instead of being cut in the middle (at least one line is shown).
 */
function fitPage(lines: string[], offset: number, maxChars = Infinity): { text: string; shown: number } {
  const width = Math.max(String(offset + lines.length - 1).length, 6);
  const room = Number.isFinite(maxChars) ? maxChars - NOTE_ROOM : Infinity;
  const numbered: string[] = [];
  let chars = 0;
  for (const [i, line] of lines.entries()) {
    const entry = `${String(offset + i).padStart(width)}\t${line}`;
    chars += entry.length + (numbered.length > 0 ? 1 : 0);
    if (chars > room && numbered.length > 0) break;
    numbered.push(entry);
  }
  return { text: numbered.join("\n"), shown: numbered.length };
}

async function readHead(handle: FileHandle): Promise<Buffer> {
  const buffer = Buffer.alloc(SNIFF_BYTES);
  const { bytesRead } = await handle.read(buffer, 0, SNIFF_BYTES, 0);
  return buffer.subarray(0, bytesRead);
}

/**
 * Reads lines `offset .. offset + limit - 1` by streaming, keeping at most `maxLineLength` bytes of
 * any line (so even one 50 MB line costs little), and stops at the first line past the page.
 */
async function readLines(
  handle: FileHandle,
  options: { offset: number; limit: number; maxLineLength: number; signal: AbortSignal },
): Promise<{ lines: string[]; hasMore: boolean; reachedOffset: boolean }> {
  const { offset, limit, maxLineLength } = options;
  const lines: string[] = [];
  let lineNumber = 1;
  let current: Buffer[] = [];
  let currentKept = 0;
  let currentDropped = 0;
  let hasMore = false;

  const finishLine = () => {
    if (lineNumber >= offset && lines.length < limit) {
      let kept = Buffer.concat(current);
      if (currentDropped > 0) {
        const end = utf8Boundary(kept);
        currentDropped += kept.length - end;
        kept = kept.subarray(0, end);
      }
      let text = kept.toString("utf8").replace(/\r$/, "");
      if (currentDropped > 0) text += ` [... line cut: ${currentDropped} more bytes]`;
      lines.push(text);
    }
    lineNumber++;
    current = [];
    currentKept = 0;
    currentDropped = 0;
  };
  const keep = (part: Buffer) => {
    if (lineNumber < offset) return; // a line before the page: only counted
    const room = maxLineLength - currentKept;
    if (room > 0) {
      const kept = part.subarray(0, room);
      current.push(Buffer.from(kept));
      currentKept += kept.length;
    }
    currentDropped += Math.max(0, part.length - Math.max(room, 0));
  };

  // A stream made with a signal that already fired is destroyed with an AbortError nobody awaits
  // yet (an unhandled error); a call aborted before its first read stops here instead.
  options.signal.throwIfAborted();
  const stream = handle.createReadStream({
    start: 0,
    highWaterMark: 64 * 1024,
    signal: options.signal,
    autoClose: false,
  });
  try {
    outer: for await (const chunk of stream as AsyncIterable<Buffer>) {
      let start = 0;
      for (;;) {
        if (lines.length >= limit) {
          // Any byte past the page means more lines follow.
          if (start < chunk.length) {
            hasMore = true;
            break outer;
          }
          break;
        }
        const newline = chunk.indexOf(0x0a, start);
        if (newline === -1) {
          keep(chunk.subarray(start));
          break;
        }
        keep(chunk.subarray(start, newline));
        finishLine();
        start = newline + 1;
      }
    }
    // A last line without a trailing newline.
    if (!hasMore && lines.length < limit && (currentKept > 0 || currentDropped > 0)) finishLine();
  } finally {
    stream.destroy();
  }
  return { lines, hasMore, reachedOffset: offset === 1 || lines.length > 0 };
}

/**
 * The length of `bytes` without a character cut in half at its end, so a line cut at
 * `maxLineLength` bytes ends with whole characters, not a replacement character.
 *
 * @example
 * ```ts
 * utf8Boundary(Buffer.from("é").subarray(0, 1)); // 0
 * ```
 */
export function utf8Boundary(bytes: Buffer): number {
  let start = bytes.length - 1;
  // Back over continuation bytes (10xxxxxx) to the lead byte of the last character.
  while (start >= 0 && start > bytes.length - 4 && (bytes[start]! & 0xc0) === 0x80) start--;
  if (start < 0) return 0;
  const lead = bytes[start]!;
  const size = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return start + size > bytes.length ? start : bytes.length;
}
