// Values of the command's flags that more than one command takes, read one way.

/**
 * A port given on the command line: 0 to 65535 in decimal digits only, or undefined. `Number()`
 * alone would take " ", "\r" or "0x10" for a port.
 */
export function portOf(value: string): number | undefined {
  if (!/^\d{1,5}$/.test(value)) return undefined;
  const port = Number(value);
  return port <= 65535 ? port : undefined;
}
