/**
 * Base64 to bytes and back with `atob` / `btoa`, which Node and browsers both have (no `Buffer`, so
 * the providers that use it bundle for a web page too).
 *
 * @example
 * ```ts
 * bytesToBase64(base64ToBytes("aGk=")); // "aGk="
 * ```
 */
export function base64ToBytes(data: string): Uint8Array {
  const binary = atob(data);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** The base64 text of some bytes. */
export function bytesToBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000)
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}
