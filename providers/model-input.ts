/** A kind of content a model reads in a prompt. */
export type ModelInputKind = "text" | "image";

const TEXT: readonly ModelInputKind[] = ["text"];
const TEXT_AND_IMAGE: readonly ModelInputKind[] = ["text", "image"];

/**
 * What the models we know read, from their providers' model pages at the time of writing. Keys
 * match a model id exactly or as a prefix; the longest matching key wins, so `o3-mini` (text) is
 * told from `o3` (images) and `gpt-4` (text) from `gpt-4o`. Models that are not here are unknown:
 * {@link modelInput} says `undefined` rather than guess.
 */
const inputs = new Map<string, readonly ModelInputKind[]>(
  Object.entries({
    // Every Claude model from Claude 3 on reads images; Claude 2 and Instant did not.
    "claude-": TEXT_AND_IMAGE,
    "claude-2": TEXT,
    "claude-instant": TEXT,
    "gpt-5": TEXT_AND_IMAGE,
    "gpt-4.1": TEXT_AND_IMAGE,
    "gpt-4o": TEXT_AND_IMAGE,
    "gpt-4-turbo": TEXT_AND_IMAGE,
    "gpt-4": TEXT,
    "gpt-3.5": TEXT,
    o1: TEXT_AND_IMAGE,
    "o1-mini": TEXT,
    "o1-preview": TEXT,
    o3: TEXT_AND_IMAGE,
    "o3-mini": TEXT,
    "o4-mini": TEXT_AND_IMAGE,
    "gemini-": TEXT_AND_IMAGE,
    // Amazon Nova: Micro is text only.
    "nova-premier": TEXT_AND_IMAGE,
    "nova-pro": TEXT_AND_IMAGE,
    "nova-lite": TEXT_AND_IMAGE,
    "nova-micro": TEXT,
    // Open models as Ollama names them.
    llava: TEXT_AND_IMAGE,
    "llama3.2-vision": TEXT_AND_IMAGE,
    llama4: TEXT_AND_IMAGE,
    "llama3.1": TEXT,
    "llama3.3": TEXT,
    "llama3:": TEXT,
    gemma3: TEXT_AND_IMAGE,
    "gemma3:1b": TEXT,
    "qwen2.5vl": TEXT_AND_IMAGE,
    "qwen2.5-coder": TEXT,
    "qwen3-coder": TEXT,
    deepseek: TEXT,
    codellama: TEXT,
  }),
);

/**
 * The id a model is known by in the table: without a `provider:` prefix, a Bedrock region and
 * vendor prefix (`us.anthropic.`), or a router's vendor folder (`anthropic/` on OpenRouter).
 */
function tableId(model: string): string {
  return model
    .replace(/^(?:anthropic|openai|openai-responses|openai-compatible|gemini|bedrock):/, "")
    .replace(/^(?:us|eu|apac|au|jp|ca|us-gov|global)\.(?=[a-z0-9-]+\.)/, "")
    .replace(/^(?:anthropic|amazon|meta|mistral|cohere|deepseek|openai|qwen)\./, "")
    .replace(/^.*\//, "")
    .toLowerCase();
}

/**
 * Says what a model reads (or corrects what the table says): `["text", "image"]` for a model that
 * takes images, `["text"]` for one that does not. `model` matches an id exactly or as a prefix.
 *
 * @example
 * ```ts
 * setModelInput("my-vision-finetune", ["text", "image"]);
 * setModelInput("llama3.2", ["text"]);
 * ```
 */
export function setModelInput(model: string, input: readonly ModelInputKind[]): void {
  inputs.set(model.toLowerCase(), [...input]);
}

/**
 * What a model reads in a prompt: `["text", "image"]`, `["text"]`, or `undefined` when the model is
 * not known (a new model, a model on your own server): the caller decides, we do not guess.
 *
 * @example
 * ```ts
 * modelInput("claude-sonnet-4-5-20250929"); // ["text", "image"]
 * modelInput("o3-mini"); // ["text"]
 * modelInput("my-finetune"); // undefined
 * ```
 */
export function modelInput(model: string): readonly ModelInputKind[] | undefined {
  const id = tableId(model);
  const exact = inputs.get(id);
  if (exact) return exact;
  let best: string | undefined;
  for (const key of inputs.keys()) {
    if (id.startsWith(key) && (!best || key.length > best.length)) best = key;
  }
  return best ? inputs.get(best) : undefined;
}

/**
 * Whether a model takes images in a prompt: `true`, `false`, or `undefined` when the model is not
 * known ({@link modelInput}).
 *
 * @example
 * ```ts
 * takesImages("gpt-4o"); // true
 * takesImages("gpt-3.5-turbo"); // false
 * ```
 */
export function takesImages(model: string): boolean | undefined {
  return modelInput(model)?.includes("image");
}
