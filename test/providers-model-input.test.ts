import { describe, expect, it } from "vitest";
import { modelInput, setModelInput, takesImages } from "../index.js";

describe("modelInput: what a model reads", () => {
  it("knows the models that take images, dated ids and provider prefixes included", () => {
    for (const model of [
      "claude-sonnet-4-5-20250929",
      "claude-3-5-haiku-latest",
      "gpt-4o-mini",
      "gpt-4.1",
      "gpt-5-nano",
      "o3",
      "o4-mini",
      "gemini-2.5-flash",
      "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
      "bedrock:amazon.nova-pro-v1:0",
      "anthropic/claude-sonnet-4.5",
      "llama3.2-vision:11b",
    ]) {
      expect([model, modelInput(model)]).toEqual([model, ["text", "image"]]);
    }
  });

  it("tells text-only models from their image-taking neighbours (the longest key wins)", () => {
    for (const model of [
      "o3-mini",
      "gpt-4",
      "gpt-4-0613",
      "gpt-3.5-turbo",
      "amazon.nova-micro-v1:0",
      "deepseek-chat",
    ])
      expect([model, takesImages(model)]).toEqual([model, false]);
    expect(takesImages("gpt-4-turbo")).toBe(true);
    expect(takesImages("gpt-4o")).toBe(true);
  });

  it("says undefined for a model it does not know, and learns it from setModelInput", () => {
    expect(modelInput("acme-vision-7b")).toBeUndefined();
    expect(takesImages("acme-vision-7b")).toBeUndefined();
    setModelInput("acme-vision", ["text", "image"]);
    expect(takesImages("acme-vision-7b")).toBe(true);
    setModelInput("acme-vision-7b-text", ["text"]);
    expect(takesImages("acme-vision-7b-text")).toBe(false);
  });
});
