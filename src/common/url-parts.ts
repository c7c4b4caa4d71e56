/**
 * The first of a URL's parts (`{ user, password, path }`, as named in a message) that is not
 * percent-encoded UTF-8 (a bare % or a cut sequence, on which decodeURIComponent throws), or
 * undefined when each decodes.
 */
export function undecodablePart(parts: Readonly<Record<string, string>>): string | undefined {
  for (const [part, value] of Object.entries(parts)) {
    try {
      decodeURIComponent(value);
    } catch {
      return part;
    }
  }
  return undefined;
}
