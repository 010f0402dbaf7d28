/**
 * Control characters (but newlines and tabs), escape sequences' introducer, bidirectional overrides
 * and isolates, zero-width characters and line/paragraph separators: what could make a terminal, or
 * a human reading a description, see something other than what is there.
 */
const UNSAFE_CHARACTERS =
  // eslint-disable-next-line no-control-regex -- removing control characters is the point
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;

/**
 * A server's text (a tool's name, description, title, a schema's descriptions) made safe to show on
 * a terminal and to give the model: control and escape characters and invisible direction marks
 * removed, newlines and tabs kept.
 *
 * @example
 * ```ts
 * serverText("List files\u001b[2K\u202eexe.txt"); // "List files[2Kexe.txt"
 * ```
 */
export function serverText(text: string): string {
  return text.replace(UNSAFE_CHARACTERS, "");
}
