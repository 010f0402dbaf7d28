import { closeSync, openSync, readFileSync, readSync } from "node:fs";
import type { ImageContent } from "../core/messages.js";

/**
 * The largest image the command attaches: 3.75 MiB, whose base64 is 5 MiB. That is Anthropic's limit
 * per image (on the base64) and Bedrock's (on the bytes), and well within OpenAI's and Gemini's;
 * the command does not resize images, so a larger one is refused with the reason.
 */
export const MAX_IMAGE_BYTES = 3.75 * 1024 * 1024;

/** The longest side the command attaches (Anthropic refuses more than 8000 pixels). */
export const MAX_IMAGE_SIDE = 8000;

/** An image format every provider takes. */
export type ImageType = "image/png" | "image/jpeg" | "image/gif" | "image/webp";

/** What the first bytes of a file say about it as an image. */
export interface ImageHeader {
  mimeType: ImageType;
  /** Pixels, when the header gives them cheaply (a JPEG's can be far into the file: read it all). */
  width?: number;
  height?: number;
}

/**
 * The image format of some bytes, by their magic numbers (not the file's name), with the size in
 * pixels when the header holds it; `undefined` for anything but PNG, JPEG, GIF and WebP.
 *
 * @example
 * ```ts
 * imageHeader(readFileSync("shot.png")); // { mimeType: "image/png", width: 640, height: 480 }
 * ```
 */
export function imageHeader(bytes: Uint8Array): ImageHeader | undefined {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b.length >= 8 && b.readUInt32BE(0) === 0x89504e47 && b.readUInt32BE(4) === 0x0d0a1a0a) {
    // IHDR is the first chunk: width and height at 16 and 20.
    return b.length >= 24 && b.toString("latin1", 12, 16) === "IHDR"
      ? { mimeType: "image/png", width: b.readUInt32BE(16), height: b.readUInt32BE(20) }
      : { mimeType: "image/png" };
  }
  if (b.length >= 6 && /^GIF8[79]a$/.test(b.toString("latin1", 0, 6))) {
    return b.length >= 10
      ? { mimeType: "image/gif", width: b.readUInt16LE(6), height: b.readUInt16LE(8) }
      : { mimeType: "image/gif" };
  }
  if (b.length >= 12 && b.toString("latin1", 0, 4) === "RIFF" && b.toString("latin1", 8, 12) === "WEBP") {
    return { mimeType: "image/webp", ...webpSize(b) };
  }
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) {
    return { mimeType: "image/jpeg", ...jpegSize(b) };
  }
  return undefined;
}

function webpSize(b: Buffer): { width?: number; height?: number } {
  if (b.length < 30) return {};
  const chunk = b.toString("latin1", 12, 16);
  if (chunk === "VP8X") return { width: 1 + b.readUIntLE(24, 3), height: 1 + b.readUIntLE(27, 3) };
  if (chunk === "VP8L" && b[20] === 0x2f) {
    const bits = b.readUInt32LE(21);
    return { width: 1 + (bits & 0x3fff), height: 1 + ((bits >> 14) & 0x3fff) };
  }
  if (chunk === "VP8 ") return { width: b.readUInt16LE(26) & 0x3fff, height: b.readUInt16LE(28) & 0x3fff };
  return {};
}

/** A JPEG's size from its first start-of-frame marker (SOF0–SOF15 but DHT, JPG and DAC). */
function jpegSize(b: Buffer): { width?: number; height?: number } {
  let at = 2;
  while (at + 9 < b.length) {
    if (b[at] !== 0xff) return {};
    const marker = b[at + 1]!;
    if (marker === 0xff) {
      at++;
      continue;
    }
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: b.readUInt16BE(at + 5), width: b.readUInt16BE(at + 7) };
    }
    at += 2 + b.readUInt16BE(at + 2);
  }
  return {};
}

/** Reads the first bytes of a file (enough for a header), or `undefined` when it cannot be read. */
export function fileHead(file: string, length = 64): Buffer | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(file, "r");
    const head = Buffer.alloc(length);
    return head.subarray(0, readSync(fd, head, 0, length, 0));
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** An image file read for a prompt: the part the model gets and what the screen says of it. */
export interface ImageFile {
  part: ImageContent;
  bytes: number;
  width?: number;
  height?: number;
}

/**
 * Reads an image file for a prompt: its content part (base64, its media type from its bytes), or
 * why it cannot go (not a PNG/JPEG/GIF/WebP, over {@link MAX_IMAGE_BYTES}, wider or taller than
 * {@link MAX_IMAGE_SIDE}).
 *
 * @example
 * ```ts
 * const read = readImageFile("shot.png");
 * if ("why" in read) console.error(read.why);
 * else agent.prompt({ role: "user", content: [read.part, { type: "text", text: "What is wrong here?" }], timestamp: Date.now() });
 * ```
 */
export function readImageFile(file: string, size: number): ImageFile | { why: string } {
  const head = fileHead(file);
  if (!head || !imageHeader(head)) return { why: NOT_AN_IMAGE };
  // Checked before reading: a huge file is refused without being read.
  if (size > MAX_IMAGE_BYTES) return { why: tooLarge(size) };
  return imageFromBytes(readFileSync(file));
}

const NOT_AN_IMAGE = "not a PNG, JPEG, GIF or WebP image";

function tooLarge(size: number): string {
  return `${formatBytes(size)}, over the ${formatBytes(MAX_IMAGE_BYTES)} an image may have (the command does not resize images: make it smaller)`;
}

/**
 * An image held in memory (read from a file, or from the clipboard) for a prompt, or why it cannot
 * go: not a PNG/JPEG/GIF/WebP, over {@link MAX_IMAGE_BYTES}, wider or taller than {@link MAX_IMAGE_SIDE}.
 *
 * @example
 * ```ts
 * const image = imageFromBytes(readFileSync("shot.png"));
 * ```
 */
export function imageFromBytes(bytes: Buffer): ImageFile | { why: string } {
  const header = imageHeader(bytes);
  if (!header) return { why: NOT_AN_IMAGE };
  if (bytes.length > MAX_IMAGE_BYTES) return { why: tooLarge(bytes.length) };
  if (Math.max(header.width ?? 0, header.height ?? 0) > MAX_IMAGE_SIDE) {
    return {
      why: `${header.width}×${header.height} pixels, over the ${MAX_IMAGE_SIDE} a side may have (make it smaller)`,
    };
  }
  return {
    part: { type: "image", data: bytes.toString("base64"), mimeType: header.mimeType },
    bytes: bytes.length,
    ...(header.width !== undefined && { width: header.width, height: header.height }),
  };
}

/**
 * What the screen says of an image: `shot.png (PNG, 1.2 MB, 640×480)`.
 *
 * @example
 * ```ts
 * describeImage("shot.png", { mimeType: "image/png", bytes: 1_200_000, width: 640, height: 480 });
 * ```
 */
export function describeImage(
  name: string,
  image: { mimeType: string; bytes: number; width?: number; height?: number },
): string {
  const kind = image.mimeType.replace(/^image\//, "").toUpperCase();
  const pixels =
    image.width !== undefined && image.height !== undefined ? `, ${image.width}×${image.height}` : "";
  return `${name} (${kind}, ${formatBytes(image.bytes)}${pixels})`;
}

/**
 * What the screen says of an image part in the transcript (a resumed session's too): its size and
 * pixels read back from its base64.
 */
export function describeImagePart(name: string, part: ImageContent): string {
  const bytes = Buffer.from(part.data, "base64");
  const header = imageHeader(bytes);
  return describeImage(name, {
    mimeType: part.mimeType,
    bytes: bytes.length,
    ...(header?.width !== undefined && { width: header.width, height: header.height }),
  });
}

/** `812 B`, `14.2 KB`, `3.8 MB` (powers of 1024, as file managers show them). */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1).replace(/\.0$/, "")} KB`;
  return `${(bytes / 1024 / 1024).toFixed(2).replace(/\.?0+$/, "")} MB`;
}

/** What the screen says of an image read for a prompt: `shot.png (PNG, 1.2 KB, 2×2)`. */
export function describeNamedImage(image: { path: string } & ImageFile): string {
  return describeImage(image.path, { ...image, mimeType: image.part.mimeType });
}

/** What the screen says when images go to a model nobody knows to read them. */
export function unknownModelNote(model: string): string {
  return `(${model} is not known to read images: sent anyway; if it cannot, its API will say so)`;
}
