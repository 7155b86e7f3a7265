"use strict";
// What release.js and its sibling modules (signing.js, notes.js) share: the release's own error,
// whose message says what to do and which `npm run release` prints without a stack, and the
// command's name. Anything thrown that is not a ReleaseError is a bug.

/** A release refused or failed for a reason the message gives. */
class ReleaseError extends Error {}

/** The command's name: its archive's prefix and the executable's name inside it. */
const COMMAND = "gpurental";

module.exports = { ReleaseError, COMMAND };
