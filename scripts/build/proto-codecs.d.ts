// Types of scripts/build/proto-codecs.js, for the tests that use it.

/** The source of the module of static codecs the provider bundle uses, for a protocol descriptor. */
export function generateCodecs(descriptor: unknown): string;
