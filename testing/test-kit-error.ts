/**
 * What the test kit throws when a check fails: an assertion error any test runner reports as a
 * failure (its `name` is `AssertionError`), with the details in its message.
 *
 * @example
 * ```ts
 * try { assertValidTranscript(messages); } catch (error) { if (error instanceof TestKitError) console.log(error.message); }
 * ```
 */
export class TestKitError extends Error {
  override readonly name = "AssertionError";
  constructor(message: string) {
    super(message);
  }
}
