// Text that comes from outside the program (the API's labels, names and messages, a state's
// addresses, a server's error) made safe to print: on a terminal, a control character is a command
// (ESC starts a sequence that can set the window title or clear the screen, CR rewrites the line,
// BEL rings), and a bidirectional override makes text read in another order than it is stored. In
// Markdown (the plan report, often posted as a pull-request comment) the same, plus Markdown's own
// syntax. One function for each: every command and every diagnostic goes through them.
//
// This module imports nothing: the provider's masked service (src/executable/masked-service.ts)
// uses it on every diagnostic.

/**
 * The characters configuration refuses and output never prints as they are, as a regular
 * expression's character class: C0 controls, DEL, C1 controls (0x80-0x9f, which some terminals
 * read as 8-bit escape sequences), the Unicode line and paragraph separators, and the
 * bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069).
 */
export const UNSAFE_CHARACTERS = "\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069";
/**
 * Characters output shows escaped but configuration takes, where they may be meant: the
 * bidirectional marks (U+200E, U+200F, U+061C), which a Hebrew or Arabic label may hold and which
 * reorder what follows them, and characters that show nothing (a soft hyphen, the zero-width
 * space, invisible operators, the byte order mark, deprecated format characters): `a\u200bb`
 * reads as `ab`, so two labels could look the same. Left as they are: the zero-width joiner and
 * non-joiner (U+200C, U+200D), which scripts such as Persian and Devanagari, and emoji sequences,
 * need; and the word joiner (U+2060), which markdownText puts in itself.
 */
const INVISIBLE_CHARACTERS =
  "\\u00ad\\u061c\\u180e\\u200b\\u200e\\u200f\\u2061-\\u2064\\u206a-\\u206f\\ufeff";
/** Every character output shows escaped. */
export const ESCAPED_CHARACTERS = `${UNSAFE_CHARACTERS}${INVISIBLE_CHARACTERS}`;
const UNSAFE = new RegExp(`[${ESCAPED_CHARACTERS}]`, "g");
/** The same, but a line feed and a tab are kept (multi-line text such as a diagnostic's detail). */
const UNSAFE_KEEP_LINES = new RegExp(`(?![\\n\\t])[${ESCAPED_CHARACTERS}]`, "g");
/** The first unsafe character, for validators. */
const FIRST_UNSAFE = new RegExp(`[${UNSAFE_CHARACTERS}]`);

/** Half of a surrogate pair without its other half: not text, and no terminal shows it. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** The longest text shown by default, in characters; longer text is cut with a note. */
export const DISPLAY_MAX_LENGTH = 2000;

/** How terminalText and markdownText shape text. */
export interface DisplayOptions {
  /** Keep line feeds and tabs (a diagnostic's detail); default false: one line. */
  multiline?: boolean;
  /** The most characters shown (code points); default DISPLAY_MAX_LENGTH. */
  maxLength?: number;
}

/** A character shown escaped, as JavaScript would write it: `\x1b`, `\u202e`. */
function escaped(c: string): string {
  const code = c.codePointAt(0)!;
  return code < 0x100
    ? `\\x${code.toString(16).padStart(2, "0")}`
    : `\\u${code.toString(16).padStart(4, "0")}`;
}

/** Text cut to `max` characters (code points, so no surrogate pair is split), with a note. */
function bounded(text: string, max: number): string {
  if (text.length <= max) return text;
  const chars = [...text];
  if (chars.length <= max) return text;
  return `${chars.slice(0, max).join("")}… (${chars.length - max} more characters)`;
}

/**
 * Text from outside made safe for a terminal: control characters (ESC, BEL, CR, NUL, C1, and line
 * feeds unless `multiline`) and bidirectional overrides shown escaped (`\x1b`, `\u202e`), the
 * length bounded. Lone surrogates become U+FFFD, as they would on output.
 */
export function terminalText(text: string, opts: DisplayOptions = {}): string {
  const unsafe = opts.multiline ? UNSAFE_KEEP_LINES : UNSAFE;
  return bounded(text, opts.maxLength ?? DISPLAY_MAX_LENGTH)
    .replace(LONE_SURROGATE, "\ufffd")
    .replace(unsafe, escaped);
}

/**
 * Text from outside made safe for Markdown (a pull-request comment): what terminalText escapes,
 * then Markdown's and HTML's own characters (`\ | * _ [ ] < > # ` ~ &`) escaped with a
 * backslash, so a label can neither format nor link nor inject HTML, and line breaks become
 * spaces (Markdown text is one line here). A word joiner (U+2060) goes after every `@`, so a name
 * such as `@org/team` mentions nobody, between the `:` and the `//` of every `scheme://` and
 * between `www` and its dot, so that GitHub's autolinks (`https://…`, `ftp://…`, `www.…`, an email
 * address) take none of it for a link: the text reads the same and links nowhere.
 */
export function markdownText(text: string, opts: Omit<DisplayOptions, "multiline"> = {}): string {
  return terminalText(text.replace(/\r?\n/g, " "), opts)
    .replace(/[\\|*_[\]<>#`~&]/g, (c) => `\\${c}`)
    .replace(/@/g, "@\u2060")
    .replace(/:\/\//g, ":\u2060//")
    .replace(/(www)\./gi, "$1\u2060.");
}

/**
 * JSON text with every character terminalText would escape, but the line feeds and tabs of its
 * layout, written as a JSON escape (`\u009b`, `\u202e`): the same value to any JSON reader, and
 * nothing a terminal obeys. JSON.stringify escapes C0 controls in strings but leaves DEL, the C1
 * controls, the separators and the overrides raw; outside strings there are none of them.
 */
export function jsonEscaped(json: string): string {
  return json.replace(UNSAFE_KEEP_LINES, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/**
 * The first character of `text` that terminalText would not print as it is (a control character or
 * a bidirectional override), escaped, or undefined when there is none: for validators that refuse
 * such text where it is configured.
 */
export function firstUnsafeCharacter(text: string): string | undefined {
  const m = FIRST_UNSAFE.exec(text);
  return m ? escaped(m[0]) : undefined;
}

/** A value quoted for a POSIX shell: single quotes, each ' written as '\''. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
