import { UserFacingError } from "../../user-facing";
import { JournalUrlError, parseJournalUrl } from "./url";

// The journal URL is checked before anything connects: a value the PostgreSQL client would refuse,
// or read otherwise than it is written, fails naming the setting, the rule and the value with its
// password masked, never with the client's bare "URI malformed".

const ENV = "the GPURENTAL_JOURNAL_URL environment variable";
const RULE = 'each "%" must begin an escape of two hex digits ("%25" for a "%" itself)';

function refusal(value: string, source = ENV): string {
  try {
    parseJournalUrl(value, source);
  } catch (err) {
    expect(err).toBeInstanceOf(JournalUrlError);
    // The commands print it as it is, as a message a person acts on.
    expect(err).toBeInstanceOf(UserFacingError);
    return (err as Error).message;
  }
  throw new Error(`${value} was taken`);
}

describe("a malformed percent-escape in any part the client decodes is refused, named", () => {
  test.each([
    ["database name", "postgres://u:s3cret@h/%ZZ", '"postgres://***@h/%ZZ"'],
    ["database name", "postgres://u:s3cret@h/db%", '"postgres://***@h/db%"'],
    // Not UTF-8: the client's decodeURIComponent throws on it.
    ["database name", "postgres://u:s3cret@h/%FF", '"postgres://***@h/%FF"'],
    ["user name", "postgres://u%ZZ:s3cret@h/db", '"postgres://***@h/db"'],
    ["password", "postgres://u:s3c%ret@h/db", '"postgres://***@h/db"'],
    ["host", "postgres://u:s3cret@h%ZZ/db", '"postgres://***@h%ZZ/db"'],
    [
      'query parameter "application_name"',
      "postgres://h/db?application_name=a%E0",
      '"postgres://h/db?application_name=a%E0"',
    ],
    ["query parameter names", "postgres://h/db?a%ZZ=1", '"postgres://h/db?a%ZZ=1"'],
  ])("its %s", (part, value, shown) => {
    const message = refusal(value);
    expect(message).toBe(
      `The GPURENTAL_JOURNAL_URL environment variable must be percent-encoded correctly in its ${part}: ${RULE} and the escapes must spell UTF-8 text; got ${shown}.`,
    );
    expect(message).not.toContain("s3c");
  });

  test("the provider's attribute is named as the source says it", () => {
    expect(refusal("postgres://u:pw@h/%ZZ", "journal_url in the provider block")).toMatch(
      /^journal_url in the provider block must be percent-encoded correctly in its database name: /,
    );
  });

  test("escapes that decode are taken, in every part", () => {
    const value =
      "postgres://us%40r:p%25ss@db.example:5432/tf%20state?application_name=a%2Fb&sslmode=require";
    expect(parseJournalUrl(value, ENV)).toEqual({
      value,
      display: "postgres://***@db.example:5432/tf%20state?application_name=a%2Fb&sslmode=require",
      source: ENV,
    });
  });
});
