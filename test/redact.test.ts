import { describe, expect, it } from "vitest";
import { redactText } from "../core/redact.js";

// Session files keep the transcript the model reads after a resume: redaction takes the secrets out
// of them without breaking the code the model read or wrote.
describe("redactText", () => {
  it("redacts secrets assigned to a secret's name", () => {
    expect(redactText("API_KEY=sk-abcdefghijklmnopqrstuvwx")).toBe("API_KEY=[redacted]");
    expect(redactText("password: hunter2")).toBe("password: [redacted]");
    expect(redactText('{"client_secret": "abc"}')).toBe('{"client_secret": "[redacted]"}');
    expect(redactText("MYSQL_PWD=letmein")).toBe("MYSQL_PWD=[redacted]");
  });

  it("leaves code that computes a secret as it is", () => {
    for (const code of [
      "const token = getToken();",
      "password = os.environ['PW']",
      "const token = await auth.token()",
      "{ apiKey: config.apiKey }",
      "secret: process.env.SECRET",
    ])
      expect(redactText(code)).toBe(code);
  });

  it("still redacts a credential by its shape inside code", () => {
    expect(redactText('const apiKey = "sk-abcdefghijklmnopqrstuvwx";')).toBe('const apiKey = "[redacted]";');
  });
});
