"use strict";
// How bench/launches.js sorts valgrind's callgrind counts: each function's self instructions into
// a category (V8's deserialiser, its parser and compilers, the garbage collector, OpenSSL, Node's
// C++, JavaScript running, libc), and a few inclusive counts shown beside them. Reads one output
// file with callgrind_annotate; running the plan under valgrind is the caller's business.
const { spawnSync } = require("node:child_process");

/** Categories of callgrind's functions, first match wins. */
const CATEGORIES = [
  [
    "V8 deserialising (Node.js snapshot, code caches)",
    /Deserializ|Snapshot|Cr_z_adler32|CodeSerializer|SerializedCodeData/,
  ],
  [
    "V8 parsing and compiling JavaScript to bytecode",
    /Scanner|Parser|PreParse|AstValueFactory|AstRawString|AstNode|Bytecode|SourcePosition|FeedbackMetadata|Compiler|compiler::|Zone|DeclarationScope|Scope::|ScopeInfo|VariableMap|maglev|baseline::|Liftoff|wasm::/,
  ],
  [
    "V8 garbage collection",
    /Heap::|Heap_|Scavenge|MarkCompact|Sweeper|Marking|Evacuat|MinorMC|GCTracer|Heap<|MemoryAllocator|PagedSpace|NewSpace|LargeObjectSpace|RememberedSet|SlotSet|IteratePointers/,
  ],
  [
    "OpenSSL (keys, signatures, TLS, hashes)",
    /^(bn_|BN_|EC_|ec_|ecp_|ossl_|OPENSSL|EVP_|SHA|sha[0-9]|aesni|gcm|CRYPTO_|X509|x509|ASN1|asn1|tls|ssl|SSL_|d2i|i2d|RAND|rand_|drbg|ECDSA|ecdsa|OBJ_|ERR_|PEM_|pem_|BIO_|bio_|OSSL|ctr_|KDF|kdf|HMAC|hmac|x25519|X25519|curve|poly1305|chacha|lh_|sk_)/,
  ],
  ["V8 hash seed (primality checks)", /sprp|HashSeed/],
  [
    "Node.js C++ (bindings, libuv, nghttp2)",
    /(^|[\s*&])node::|^uv_|^uv__|nghttp2|^ada::|simdutf|llhttp|^ares_|brotli/,
  ],
  [
    "JavaScript running (JIT code, builtins, V8 runtime)",
    /^(\?\?\?|0x|Builtins_|Builtin)|Runtime_|v8::|V8|icu_|icu::/,
  ],
  ["libc (malloc, memcpy), the dynamic loader", /.*/],
];

/** Self instructions per category of one callgrind output file. */
function grindCategories(file) {
  const r = spawnSync("callgrind_annotate", ["--threshold=100", "--inclusive=no", file], {
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024,
  });
  const total = Number(/^([\d,]+) \(100\.0+%\)\s+PROGRAM TOTALS/m.exec(r.stdout)?.[1].replace(/,/g, ""));
  const cats = new Map(CATEGORIES.map(([c]) => [c, 0]));
  for (const line of r.stdout.split("\n")) {
    const m = /^\s*([\d,]+) \([\s\d.]+%\)\s+(\S.*)$/.exec(line);
    if (!m || m[2].startsWith("PROGRAM TOTALS")) continue;
    const ir = Number(m[1].replace(/,/g, ""));
    // "file:function [object]": the function, or the object for code without a name.
    const fn = m[2].replace(/^[^:]*:/, "").replace(/ \[[^\]]*\]$/, "");
    const cat = CATEGORIES.find(([, re]) => re.test(fn))[0];
    cats.set(cat, cats.get(cat) + ir);
  }
  // Inclusive: what the rows above are partly made of.
  const inc = spawnSync("callgrind_annotate", ["--threshold=100", "--inclusive=yes", file], {
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024,
  });
  const inclusive = (re) =>
    Math.max(
      0,
      ...inc.stdout
        .split("\n")
        .filter((l) => re.test(l))
        .map((l) => Number(/^\s*([\d,]+)/.exec(l)?.[1].replace(/,/g, "") ?? 0)),
    );
  for (const [label, re] of INCLUSIVE) cats.set(label, inclusive(re));
  return { total, cats };
}

/** Inclusive counts shown beside the categories (the largest matching line of each). */
const INCLUSIVE = [
  [
    "  of all: functions compiled at their first call (not from a cache)",
    /:v8::internal::Compiler::Compile\(v8::internal::Isolate\*, v8::internal::Handle<v8::internal::JSFunction>/,
  ],
  ["  of all: code caches deserialised (CodeSerializer)", /:v8::internal::CodeSerializer::Deserialize\(/],
];

module.exports = { CATEGORIES, INCLUSIVE, grindCategories };
