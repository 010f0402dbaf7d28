import * as path from "node:path";

// Node's modules load on first use, not with the package (issue 44).
const nodeCrypto = () => process.getBuiltinModule("node:crypto");
const nodeFs = () => process.getBuiltinModule("node:fs");

/** Base64 shorter than this stays inline: a tiny image costs less than a file. */
const INLINE_LIMIT = 1024;

/** What an image written out of the session's JSON files looks like there. */
const STORED = /^images\/[0-9a-f]{32}\.(?:png|jpeg|gif|webp|bin)$/;

/** The JSON of a session's files, with each image kept once in the session's `images/` folder. */
export interface ImageStash {
  /** `value` as JSON, each image part's base64 replaced by `stored: "images/<hash>.<ext>"`. */
  stringify(value: unknown): string;
  /** JSON written by {@link stringify} (or before images were stored apart), images read back in. */
  parse(text: string): unknown;
}

function isImagePart(value: unknown): value is { type: "image"; data?: unknown; stored?: unknown } {
  return typeof value === "object" && value !== null && (value as { type?: unknown }).type === "image";
}

/**
 * Keeps the images of a session's transcript out of its JSON files: `snapshot.json` is rewritten
 * on every change and `events.jsonl` holds the transcript at each run's end, so a 3 MB screenshot
 * inline would be written again and again, and read back by every `--resume` list. Each image is
 * written once, as its bytes, under `<dir>/images/`, named by its content's hash; the JSON says
 * where (`{ type: "image", mimeType, stored: "images/…" }`). Reading puts the base64 back; an image
 * file gone from the folder reads as a text part saying so, so the transcript stays sendable.
 *
 * @example
 * ```ts
 * const stash = createImageStash(session.dir);
 * writeFileAtomic(file, stash.stringify(snapshot));
 * const again = stash.parse(readFileSync(file, "utf8"));
 * ```
 */
export function createImageStash(dir: string): ImageStash {
  const written = new Map<string, string>();
  /** Set once an image was seen: from then on every write looks for images. */
  let hasImages = false;

  const store = (data: string, mimeType: unknown): string => {
    const known = written.get(data);
    if (known) return known;
    const hash = nodeCrypto().createHash("sha256").update(data).digest("hex").slice(0, 32);
    const ext = /^image\/(png|jpeg|gif|webp)$/.exec(String(mimeType))?.[1] ?? "bin";
    const relative = `images/${hash}.${ext}`;
    const file = path.join(dir, relative);
    if (!nodeFs().existsSync(file)) {
      nodeFs().mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
      const temp = `${file}.${nodeCrypto().randomBytes(4).toString("hex")}.tmp`;
      nodeFs().writeFileSync(temp, Buffer.from(data, "base64"), { mode: 0o600 });
      nodeFs().renameSync(temp, file);
    }
    written.set(data, relative);
    return relative;
  };

  const replacer = (_key: string, value: unknown) => {
    if (!isImagePart(value) || typeof value.data !== "string" || value.data.length < INLINE_LIMIT)
      return value;
    const { data, ...rest } = value;
    return { ...rest, stored: store(data, (value as { mimeType?: unknown }).mimeType) };
  };

  const reviver = (_key: string, value: unknown) => {
    if (!isImagePart(value) || typeof value.stored !== "string" || value.data !== undefined) return value;
    const { stored, ...rest } = value;
    if (!STORED.test(stored)) return value;
    let bytes: Buffer;
    try {
      bytes = nodeFs().readFileSync(path.join(dir, stored));
    } catch {
      return { type: "text", text: `[image ${stored} is missing from the session folder]` };
    }
    const data = bytes.toString("base64");
    written.set(data, stored);
    return { ...rest, data };
  };

  return {
    stringify(value) {
      if (!hasImages) {
        const json = JSON.stringify(value);
        if (!json.includes('"type":"image"')) return json;
        hasImages = true;
      }
      return JSON.stringify(value, replacer);
    },
    parse(text) {
      if (!text.includes('"stored":"images/')) return JSON.parse(text);
      hasImages = true;
      return JSON.parse(text, reviver);
    },
  };
}
