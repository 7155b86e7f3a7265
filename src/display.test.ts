import {
  DISPLAY_MAX_LENGTH,
  ESCAPED_CHARACTERS,
  firstUnsafeCharacter,
  jsonEscaped,
  markdownText,
  terminalText,
} from "./display";

// What a terminal or a Markdown renderer receives from text that came from outside: no byte of it
// may be a command, and no character may reorder what is read.

/** The label an organization member gave an instance through the API in the audit. */
const EVIL = "evil\u001b]0;PWNED\u0007\u001b[2Jx";

/** Every character that may not reach a terminal raw. */
const RAW = new RegExp(`[${ESCAPED_CHARACTERS}]`);

describe("terminalText", () => {
  it("shows ESC and BEL escaped, so the title is not set and the screen not cleared", () => {
    expect(terminalText(EVIL)).toBe("evil\\x1b]0;PWNED\\x07\\x1b[2Jx");
  });

  it.each([
    ["NUL", "a\u0000b", "a\\x00b"],
    ["CR, which rewrites the line", "safe\rEVIL", "safe\\x0dEVIL"],
    ["a line feed, on one line", "a\nb", "a\\x0ab"],
    ["a tab, on one line", "a\tb", "a\\x09b"],
    ["DEL", "a\u007fb", "a\\x7fb"],
    ["C1 CSI, an 8-bit escape", "a\u009b2Jb", "a\\x9b2Jb"],
    ["a right-to-left override", "abc\u202eexe.txt", "abc\\u202eexe.txt"],
    ["an isolate", "a\u2066b\u2069", "a\\u2066b\\u2069"],
    ["a line separator", "a\u2028b", "a\\u2028b"],
    ["a lone surrogate", "a\ud800b", "a\ufffdb"],
    ["right-to-left and Arabic letter marks", "a\u200fb\u061cc\u200ed", "a\\u200fb\\u061cc\\u200ed"],
    // Invisible: `a\u200bb` would read as `ab`, another label.
    ["a zero-width space", "a\u200bb", "a\\u200bb"],
    ["an invisible operator and a byte order mark", "a\u2062b\ufeffc", "a\\u2062b\\ufeffc"],
    ["a soft hyphen", "a\u00adb", "a\\xadb"],
  ])("escapes %s", (_what, input, output) => {
    expect(terminalText(input)).toBe(output);
  });

  it("keeps line feeds and tabs in multi-line text, never CR or ESC", () => {
    expect(terminalText("a\n\tb\r\n\u001b[1m", { multiline: true })).toBe("a\n\tb\\x0d\n\\x1b[1m");
  });

  it("keeps printable text of any script as it is", () => {
    // The zero-width joiners, which scripts and emoji sequences need, included.
    const text = "GPU × 2 — Größe ¥1,000 日本語 🚀 عربي می\u200cخواهم 👩\u200d💻";
    expect(terminalText(text)).toBe(text);
  });

  it("bounds the length in characters, and says how much was left out", () => {
    expect(terminalText("🚀".repeat(DISPLAY_MAX_LENGTH + 5))).toBe(
      `${"🚀".repeat(DISPLAY_MAX_LENGTH)}… (5 more characters)`,
    );
    expect(terminalText("abcdef", { maxLength: 3 })).toBe("abc… (3 more characters)");
    expect(terminalText("abc", { maxLength: 3 })).toBe("abc");
  });

  it("leaves no raw control character for any input of one code unit", () => {
    for (let c = 0; c < 0x10000; c++) {
      expect(RAW.test(terminalText(`x${String.fromCharCode(c)}y`))).toBe(false);
    }
  });
});

describe("markdownText", () => {
  it("escapes controls, Markdown, HTML and entities, and joins lines", () => {
    expect(markdownText(EVIL)).toBe("evil\\\\x1b\\]0;PWNED\\\\x07\\\\x1b\\[2Jx");
    expect(markdownText("<img src=x onerror=alert(1)>")).toBe("\\<img src=x onerror=alert(1)\\>");
    expect(markdownText("[click](https://evil.example) **bold** `code` ~~gone~~")).toBe(
      "\\[click\\](https:\u2060//evil.example) \\*\\*bold\\*\\* \\`code\\` \\~\\~gone\\~\\~",
    );
    expect(markdownText("&#x202E;")).toBe("\\&\\#x202E;");
    expect(markdownText("a\nb\r\nc")).toBe("a b c");
  });

  it("keeps its word joiners when printed: the terminal escaping leaves them", () => {
    const md = markdownText("owner @org/team see https://example.com www.example.com");
    expect(terminalText(md)).toBe(md);
    expect(md).toContain("@\u2060org");
  });

  it("mentions nobody", () => {
    expect(markdownText("@org/team")).toBe("@\u2060org/team");
  });

  it("links nowhere: no URL, www address or email address is left for an autolink", () => {
    expect(markdownText("https://evil.example/login")).toBe("https:\u2060//evil.example/login");
    expect(markdownText("www.evil.example")).toBe("www\u2060.evil.example");
    expect(markdownText("Log in at HTTP://WWW.evil.example now")).toBe(
      "Log in at HTTP:\u2060//WWW\u2060.evil.example now",
    );
    expect(markdownText("ftp://x.example, mailto:a@b.example")).toBe(
      "ftp:\u2060//x.example, mailto:a@\u2060b.example",
    );
    expect(markdownText("a_b://c")).toBe("a\\_b:\u2060//c");
    // Text without an address is left as it was.
    expect(markdownText("node: www-data, 2.5 h")).toBe("node: www-data, 2.5 h");
  });
});

describe("jsonEscaped", () => {
  test("what JSON.stringify leaves raw is written as a JSON escape: the same value, nothing a terminal obeys", () => {
    const value = { label: "a\u009b2Jb\u007f\u202ec\u2028d", n: ["\u0085"] };
    const text = jsonEscaped(JSON.stringify(value, null, 2));
    expect(firstUnsafeCharacter(text.replace(/\n/g, " "))).toBeUndefined();
    expect(text).toContain("a\\u009b2Jb\\u007f\\u202ec\\u2028d");
    expect(JSON.parse(text)).toEqual(value);
    // The layout's line feeds stay line feeds.
    expect(text.split("\n")).toHaveLength(JSON.stringify(value, null, 2).split("\n").length);
  });
});

describe("firstUnsafeCharacter", () => {
  it("names the first control character or override, escaped", () => {
    expect(firstUnsafeCharacter(EVIL)).toBe("\\x1b");
    expect(firstUnsafeCharacter("ok\u202e")).toBe("\\u202e");
    expect(firstUnsafeCharacter("plain label-1 ü")).toBeUndefined();
    // Shown escaped, but accepted where configured: a Hebrew or Arabic label may hold a mark.
    expect(firstUnsafeCharacter("שלום\u200e abc \u061c \u200f")).toBeUndefined();
    expect(firstUnsafeCharacter("a\u200bb\ufeff")).toBeUndefined();
  });
});
