/**
 * The text the model sees for a call the user denied. Its own module so that the page's message
 * conversion (`toUIMessages`) can recognise a denial without bundling the tool-call statechart.
 *
 * @example
 * ```ts
 * deniedText("not that file"); // "The user denied this tool call: not that file"
 * ```
 */
export function deniedText(reason?: string): string {
  return reason ? `The user denied this tool call: ${reason}` : "The user denied this tool call";
}
