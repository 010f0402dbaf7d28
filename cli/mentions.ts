import { readFileSync, realpathSync, statSync } from "node:fs";
import * as path from "node:path";
import type { ImageContent, UserMessage } from "../core/messages.js";
import { takesImages } from "../providers/model-input.js";
import { fileHead, type ImageFile, imageHeader, readImageFile } from "./images.js";

/** Largest file an `@path` mention attaches. */
export const MAX_MENTION_BYTES = 256 * 1024;

/** What {@link expandMentions} made of a typed line. */
export interface ExpandedMentions {
  /** The line, with each attached file's content after it. */
  text: string;
  attached: { path: string; bytes: number; lines: number }[];
  /** Images mentioned (PNG, JPEG, GIF, WebP by their bytes): they go to the model as image parts. */
  images: ({ path: string } & ImageFile)[];
  /** Mentions that name a file but were not attached, and why (`image`: an image that cannot go). */
  skipped: { path: string; why: string; image?: true }[];
}

/**
 * Attaches the workspace files a line mentions as `@path` (a word starting with `@`): each one's
 * content follows the line in a `<file path="…">` block, so the model reads it without a tool
 * call. An image (PNG, JPEG, GIF or WebP by its first bytes, whatever its name) is read into
 * `images` instead, for the caller to send as an image part ({@link promptContent}). A mention of a
 * path that is not a file of the workspace (a user name, an `@scope/package`) stays plain text; a
 * file outside the workspace, a folder, another binary file, an image over the size limit or a text
 * file over {@link MAX_MENTION_BYTES} is not attached, and said so.
 *
 * @example
 * ```ts
 * expandMentions("why does @src/math.js fail?", cwd).text;
 * // 'why does @src/math.js fail?\n\n<file path="src/math.js">\n…\n</file>'
 * ```
 */
export function expandMentions(line: string, cwd: string): ExpandedMentions {
  const result: ExpandedMentions = { text: line, attached: [], images: [], skipped: [] };
  const blocks: string[] = [];
  const seen = new Set<string>();
  let root: string;
  try {
    root = realpathSync(cwd);
  } catch {
    return result;
  }
  for (const match of line.matchAll(/(?:^|\s)@([^\s@]+)/g)) {
    // A sentence's full stop or comma after the path is not part of it.
    const mentioned = match[1]!.replace(/[.,;:!?)]+$/, "");
    if (!mentioned || seen.has(mentioned)) continue;
    seen.add(mentioned);
    let real: string;
    try {
      real = realpathSync(path.resolve(cwd, mentioned));
    } catch {
      continue; // not a path: plain text
    }
    if (real !== root && !real.startsWith(`${root}${path.sep}`)) {
      result.skipped.push({ path: mentioned, why: "outside the workspace" });
      continue;
    }
    const info = statSync(real);
    if (!info.isFile()) {
      result.skipped.push({ path: mentioned, why: "not a file" });
      continue;
    }
    const relative = path.relative(root, real) || mentioned;
    const head = fileHead(real, 8192) ?? Buffer.alloc(0);
    if (imageHeader(head)) {
      const image = readImageFile(real, info.size);
      if ("why" in image) result.skipped.push({ path: mentioned, why: image.why, image: true });
      else result.images.push({ path: relative, ...image });
      continue;
    }
    if (head.includes(0)) {
      // Sent as text it would be garbage to the model.
      result.skipped.push({ path: mentioned, why: "a binary file (only PNG, JPEG, GIF and WebP images go)" });
      continue;
    }
    if (info.size > MAX_MENTION_BYTES) {
      result.skipped.push({ path: mentioned, why: `${info.size} bytes, over ${MAX_MENTION_BYTES}` });
      continue;
    }
    const content = readFileSync(real, "utf8");
    blocks.push(`<file path="${relative}">\n${content.replace(/\n$/, "")}\n</file>`);
    result.attached.push({
      path: relative,
      bytes: info.size,
      lines: content.replace(/\n$/, "").split("\n").length,
    });
  }
  if (blocks.length) result.text = `${line}\n\n${blocks.join("\n\n")}`;
  return result;
}

/** The label that names an image in a prompt's content, right before it: the model and the screen read it. */
export function imageLabel(name: string): string {
  return `\n[image: ${name}]`;
}

/** An image label's name, or `undefined` when the text is not a label. */
export function imageLabelName(text: string): string | undefined {
  return /^\n\[image: (.*)\]$/s.exec(text)?.[1];
}

/**
 * A prompt's content: the text alone, or, with images, the text then each image after its label
 * (`[image: shot.png]`), so the model can tell which file each one is.
 *
 * @example
 * ```ts
 * promptContent("what is wrong here?", [{ path: "shot.png", part }]);
 * // [{ type: "text", text: "what is wrong here?" }, { type: "text", text: "\n[image: shot.png]" }, part]
 * ```
 */
export function promptContent(
  text: string,
  images: readonly { path: string; part: ImageContent }[],
): UserMessage["content"] {
  if (images.length === 0) return text;
  return [
    { type: "text", text },
    ...images.flatMap(({ path: name, part }) => [{ type: "text" as const, text: imageLabel(name) }, part]),
  ];
}

/** An image for a prompt, named as the model and the screen will see it. */
export type NamedImage = { path: string } & ImageFile;

/** What {@link attachToPrompt} made of a line: the content to send, or why nothing may go. */
export type PromptAttachments =
  | { refused: string }
  | {
      content: UserMessage["content"];
      files: ExpandedMentions["attached"];
      images: NamedImage[];
      skipped: ExpandedMentions["skipped"];
      /** The model is not known to read images or not ({@link takesImages}): they were sent anyway. */
      modelUnknown: boolean;
    };

/**
 * A prompt line with what it attaches: the files and images it mentions as `@path` (inside `cwd`)
 * and `images` given otherwise (pasted). A model known to take no images gets nothing, nor does any
 * model when a mentioned image cannot go (too large): the result says why (`refused`), and the
 * caller sends nothing rather than the line without its images.
 *
 * @example
 * ```ts
 * const attached = attachToPrompt("what is wrong in @shot.png?", { cwd, model: "gpt-4o" });
 * if ("refused" in attached) throw new Error(attached.refused);
 * await agent.prompt({ role: "user", content: attached.content, timestamp: Date.now() });
 * ```
 */
export function attachToPrompt(
  line: string,
  options: { cwd?: string; model: string; images?: readonly NamedImage[] },
): PromptAttachments {
  const expanded =
    options.cwd !== undefined && line.includes("@") ? expandMentions(line, options.cwd) : undefined;
  const images = [...(options.images ?? []), ...(expanded?.images ?? [])];
  const unusable = expanded?.skipped.filter((file) => file.image) ?? [];
  if (unusable.length > 0) {
    // The line is about the image: answered without it, it would waste a turn.
    return { refused: unusable.map((file) => `${file.path} is ${file.why}`).join("; ") };
  }
  const takes = takesImages(options.model);
  if (images.length > 0 && takes === false) {
    return {
      refused: `${options.model} does not take images (${images.map((image) => image.path).join(", ")})`,
    };
  }
  return {
    content: promptContent(expanded?.text ?? line, images),
    files: expanded?.attached ?? [],
    images,
    skipped: expanded?.skipped ?? [],
    modelUnknown: images.length > 0 && takes === undefined,
  };
}
