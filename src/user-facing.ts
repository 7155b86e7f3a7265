/**
 * The marker of an error a person can act on from its message alone: a path that cannot be read, a
 * document that is not what it should be, a flag or an amount that is not one, a Terraform command
 * that failed. The commands print such a message on its own, without a stack, and exit with their
 * failure code; any other error is a fault of the program and keeps its stack. A new error of this
 * kind extends this class rather than being added to a list of names somewhere.
 */
export class UserFacingError extends Error {}
