/**
 * Secrets found by name and by value, for every surface a value leaves the process through: the
 * visualizer's page and recordings, the Stately inspector, the command's session files. Runs
 * anywhere (no Node modules): the browser entry uses it too.
 */

/** What a redacted secret reads as. */
export const REDACTED = "[redacted]";

/**
 * Property names that hold a secret, at any depth: `apiKey`, `Authorization`, `x-api-key`,
 * `accessTokens`, `private_key`, `bearer`, `X-Auth`, `pass`, `sessionKey`, `client_secret`…
 */
export const SECRET_KEY_PATTERN =
  /api[-_]?key|authori[sz]ation|secret|passw(?:or)?d|^pass$|^pwd$|passphrase|token|cookie|credential|bearer|private[-_]?key|^x[-_]auth|session[-_]?key|access[-_]?key/i;

/**
 * Whether a property holds a secret, by its name and (when given) its value. A name about tokens
 * with a number value is a count (`totalTokens: 12`), not a secret; with a string it is one
 * (`apiTokens: "…"`). A boolean is never a secret.
 *
 * @example
 * ```ts
 * isSecretKey("apiTokens", "tok_live_…"); // true
 * isSecretKey("totalTokens", 12); // false
 * isSecretKey("Authorization"); // true
 * ```
 */
export function isSecretKey(key: string, value?: unknown): boolean {
  if (!SECRET_KEY_PATTERN.test(key)) return false;
  // A flag is no secret; a number is a count when only the word "token" made the name match.
  if (typeof value === "boolean") return false;
  if (typeof value === "number") return SECRET_KEY_PATTERN.test(key.replace(/tokens?/gi, "_"));
  return true;
}

/** Credentials recognisable by their shape, wherever they appear in a text. */
const SECRET_SHAPES: readonly RegExp[] = [
  // PEM private keys, whole.
  /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g,
  // OpenAI / Anthropic, Google, AWS access key ids, GitHub, GitLab, Slack, npm, Hugging Face, Stripe.
  /\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_*-]{16,}|AIza[0-9A-Za-z_-]{20,}|A[KS]IA[0-9A-Z]{12,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{16,}|xox[abposr]-[A-Za-z0-9-]{10,}|npm_[A-Za-z0-9]{30,}|hf_[A-Za-z0-9]{30,}|[rs]k_live_[A-Za-z0-9]{16,})/g,
  // JSON web tokens.
  /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
];

/** `Bearer <token>` / `Basic <credentials>` anywhere, when it reads as a credential (has a digit). */
const AUTH_SCHEME = /\b(Bearer|Basic)(\s+)(?=[A-Za-z0-9._~+/=-]*\d)[A-Za-z0-9._~+/=-]{8,}/gi;

/** An `Authorization` header's value, whatever it looks like: `-H 'Authorization: Bearer …'`. */
const AUTH_HEADER =
  /\b(authorization["']?[ \t]*[:=][ \t]*["']?(?:(?:bearer|basic|token)[ \t]+)?)(?!(?:null|true|false|bearer|basic|token)\b|\[redacted)([^\s"',;)}\]]+)/gi;

/** The password of a URL or DSN: `postgres://user:password@host`. */
const URL_PASSWORD = /(?<![a-z0-9+.-])([a-z][a-z0-9+.-]*:\/\/[^\s:/@'"]*:)([^\s@/'"]+)(@)/gi;

/**
 * `NAME=value`, `NAME: value`, `"name": "value"` (a `.env` line, a header, an option, JSON in a
 * text): the value is redacted when the name is a secret's.
 */
const ASSIGNMENT =
  /(?<![A-Za-z0-9_.-])([A-Za-z_][A-Za-z0-9_.-]*)(["']?[ \t]*[:=][ \t]*)(?:"([^"\n]*)"|'([^'\n]*)'|([^\s"',;&|)}\]]+))/g;

/** Environment variable names of secrets the general pattern misses: `OPENAI_KEY`, `MYSQL_PWD`, `SMTP_PASS`. */
const SECRET_ENV_NAME = /^[A-Z0-9_]*(?:^|_)(?:KEY|PWD|PASS|AUTH)(?:_[A-Z0-9_]*)?$/;

/**
 * Whether an unquoted value assigned to a secret's name is code that computes it (`getToken()`,
 * `config.apiKey`, `await auth.token()`, `process.env.SECRET`), not the secret itself. Session files
 * keep the transcript the model reads again after a resume, so code in it must survive redaction.
 */
function isCodeExpression(value: string): boolean {
  if (/[([]/.test(value)) return true;
  if (/^(?:await|new|typeof|this|function|async|undefined|None|nil|env|process|os|import)$/.test(value))
    return true;
  return /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$/.test(value) && !/^\d/.test(value);
}

/**
 * A text with the secrets it shows replaced by `[redacted]`: credentials by their shape (API keys,
 * tokens, private keys, `Bearer …`, a URL's password) and values assigned to a secret's name
 * (`API_KEY=…`, `password: …`, `"client_secret": "…"`).
 *
 * @example
 * ```ts
 * redactText("curl -H 'Authorization: Bearer abc123def' postgres://app:hunter2@db/app");
 * // "curl -H 'Authorization: Bearer [redacted]' postgres://app:[redacted]@db/app"
 * ```
 */
export function redactText(text: string): string {
  // Most texts hold nothing like a secret: skip the work.
  if (!/[=:@-]|bearer|basic|eyJ/i.test(text)) return text;
  let out = text;
  for (const shape of SECRET_SHAPES) out = out.replace(shape, REDACTED);
  out = out.replace(AUTH_SCHEME, (_all, scheme: string, space: string) => `${scheme}${space}${REDACTED}`);
  out = out.replace(AUTH_HEADER, (_all, head: string) => `${head}${REDACTED}`);
  out = out.replace(
    URL_PASSWORD,
    (_all, head: string, _password: string, at: string) => `${head}${REDACTED}${at}`,
  );
  return out.replace(
    ASSIGNMENT,
    (all, name: string, separator: string, doubled?: string, single?: string, bare?: string) => {
      const value = doubled ?? single ?? bare ?? "";
      if (!value || value.includes("[redacted") || /^(?:bearer|basic|null|true|false)$/i.test(value))
        return all;
      if (bare !== undefined && isCodeExpression(bare)) return all;
      const secret =
        SECRET_ENV_NAME.test(name) || isSecretKey(name, /^\d+$/.test(value) ? Number(value) : value);
      if (!secret) return all;
      // A bare value after a quoted name (`"pin": 1234`, JSON in a text) is replaced by a string,
      // so the JSON stays JSON.
      const quote =
        doubled !== undefined || (bare !== undefined && separator.startsWith('"'))
          ? '"'
          : single !== undefined
            ? "'"
            : "";
      return `${name}${separator}${quote}${REDACTED}${quote}`;
    },
  );
}

/**
 * A copy of a JSON-like value with its secrets redacted, by name ({@link isSecretKey}) and by value
 * ({@link redactText}) at any depth. Image data is left as it is (base64, no secret to find). Only
 * plain data is walked: use `sanitize` for values that may hold cycles, functions or errors.
 *
 * @example
 * ```ts
 * redactSecrets({ env: "API_KEY=sk-…", apiTokens: "t-…", usage: { totalTokens: 12 } });
 * // { env: "API_KEY=[redacted]", apiTokens: "[redacted]", usage: { totalTokens: 12 } }
 * ```
 */
export function redactSecrets<T>(value: T): T {
  return createRedactor()(value);
}

/**
 * {@link redactSecrets} for a value written again and again (a session's snapshot, rewritten on every
 * change with mostly the same transcript): long strings seen in the previous call are not scanned
 * again. What it remembers is the strings of the last call only, so it holds no more than the value.
 *
 * @example
 * ```ts
 * const redact = createRedactor();
 * writeFileAtomic(file, JSON.stringify(redact(agent.getPersistedSnapshot())));
 * ```
 */
export function createRedactor(): <T>(value: T) => T {
  let previous = new Map<string, string>();
  return <T>(value: T): T => {
    const current = new Map<string, string>();
    const text = (input: string): string => {
      if (input.length < 256) return redactText(input);
      const known = current.get(input) ?? previous.get(input) ?? redactText(input);
      current.set(input, known);
      return known;
    };
    const visit = (input: unknown): unknown => {
      if (typeof input === "string") return text(input);
      if (typeof input !== "object" || input === null) return input;
      if (Array.isArray(input)) return input.map(visit);
      const isImage = (input as { type?: unknown }).type === "image";
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(input)) {
        if (isImage && key === "data") out[key] = item;
        else if (isSecretKey(key, item) && item !== undefined && item !== null && item !== "")
          out[key] = REDACTED;
        else out[key] = visit(item);
      }
      return out;
    };
    const result = visit(value) as T;
    previous = current;
    return result;
  };
}
