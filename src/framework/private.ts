// A JSON form for a resource's private data (the bytes Terraform keeps with its state and hands
// back on every later call, never showing them). Terraform treats the bytes as opaque; JSON keeps
// them readable in a state file and lets keys be added without breaking older ones.

/** The private data as a JSON object: {} for empty bytes or bytes that are not a JSON object. */
export function readPrivate(bytes: Buffer | undefined): Readonly<Record<string, unknown>> {
  if (!bytes || bytes.length === 0) return {};
  try {
    const value: unknown = JSON.parse(bytes.toString("utf8"));
    return value !== null && typeof value === "object" && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

/** Private data from a JSON object; an object without keys becomes empty bytes. */
export function writePrivate(value: Readonly<Record<string, unknown>>): Buffer {
  return Object.keys(value).length === 0 ? Buffer.alloc(0) : Buffer.from(JSON.stringify(value), "utf8");
}
