/**
 * A value made on its first use and kept: for what a module would otherwise build as it loads (a
 * zod schema, a tool), which every process importing the package would pay for on its cold start
 * whether it uses the value or not (issue 44).
 *
 * @example
 * ```ts
 * const parameters = lazy(() => z.object({ path: z.string() }));
 * parameters().parse({ path: "a.txt" }); // built here, on the first call; the same object after
 * ```
 */
export function lazy<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}
