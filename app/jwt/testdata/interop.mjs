// Interop vectors for latchkey app/jwt against the real libraries.
//   node interop.mjs gen     > vectors.json   (tokens made by next-auth / @auth/core)
//   node interop.mjs decode  < lines          (each line: "<v4|v5> <salt or -> <token>")
// Setup: npm init -y && npm install --legacy-peer-deps next-auth@4.24.11 @auth/core@0.41.3
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import * as v4 from "next-auth/jwt";
import * as v5 from "@auth/core/jwt";
import { EncryptJWT, base64url, calculateJwkThumbprint } from "jose";
import { hkdf } from "@panva/hkdf";

const require = createRequire(import.meta.url);
const pkgVersion = (dir) =>
  JSON.parse(readFileSync(require.resolve("jose").replace(/jose[/\\].*$/, "") + dir + "/package.json", "utf8")).version;

const SECRET = "interop-secret";
const LONG = 100 * 365 * 24 * 60 * 60; // ~100 years, so the vectors stay valid
const TOKEN = { name: "Alice", email: "alice@example.com", sub: "u1" };

async function decode(format, salt, token) {
  try {
    const payload = format === "v4"
      ? await v4.decode({ token, secret: SECRET, salt: salt ?? "" })
      : await v5.decode({ token, secret: SECRET, salt });
    return { ok: true, payload };
  } catch (e) {
    return { ok: false, error: `${e.name}: ${e.message}` };
  }
}

// What @auth/core's decode accepts besides its own output: A256GCM with the
// 32-byte HKDF key, with no kid or a SHA-256 thumbprint kid.
async function v5gcm(salt, { kid, keyLen = 32, enc = "A256GCM", badKid } = {}) {
  const key = await hkdf("sha256", SECRET, salt, `Auth.js Generated Encryption Key (${salt})`, keyLen);
  const header = { alg: "dir", enc };
  if (kid) header.kid = await calculateJwkThumbprint({ kty: "oct", k: base64url.encode(key) }, `sha${keyLen << 3}`);
  if (badKid) header.kid = badKid;
  const now = (Date.now() / 1000) | 0;
  return new EncryptJWT(TOKEN).setProtectedHeader(header).setIssuedAt().setExpirationTime(now + LONG)
    .setJti(crypto.randomUUID()).encrypt(key);
}

async function gen() {
  const defs = [
    ["v4-session", "v4", "", () => v4.encode({ token: TOKEN, secret: SECRET, maxAge: LONG })],
    ["v4-state-cookie", "v4", "next-auth.state",
      () => v4.encode({ token: { value: "st4te", provider: "github" }, secret: SECRET, salt: "next-auth.state", maxAge: LONG })],
    ["v4-expired", "v4", "", () => v4.encode({ token: TOKEN, secret: SECRET, maxAge: -3600 })],
    ["v5-session", "v5", "authjs.session-token",
      () => v5.encode({ token: TOKEN, secret: SECRET, salt: "authjs.session-token", maxAge: LONG })],
    ["v5-secure-session", "v5", "__Secure-authjs.session-token",
      () => v5.encode({ token: TOKEN, secret: SECRET, salt: "__Secure-authjs.session-token", maxAge: LONG })],
    ["v5-expired", "v5", "authjs.session-token",
      () => v5.encode({ token: TOKEN, secret: SECRET, salt: "authjs.session-token", maxAge: -3600 })],
    ["v5-a256gcm-no-kid", "v5", "authjs.session-token", () => v5gcm("authjs.session-token")],
    ["v5-a256gcm-kid", "v5", "authjs.session-token", () => v5gcm("authjs.session-token", { kid: true })],
    ["v5-wrong-kid", "v5", "authjs.session-token",
      () => v5gcm("authjs.session-token", { keyLen: 64, enc: "A256CBC-HS512", badKid: "not-the-thumbprint" })],
  ];
  const vectors = [];
  for (const [name, format, salt, make] of defs) {
    const token = await make();
    const node = await decode(format, salt, token);
    vectors.push({ name, format, salt, token, node_accepts: node.ok, node_result: node.ok ? node.payload : node.error });
  }
  const out = {
    comment: "Made by app/jwt/testdata/interop.mjs (node interop.mjs gen) with next-auth@" + pkgVersion("next-auth") +
      " and @auth/core@" + pkgVersion("@auth/core") + " (jose " + pkgVersion("jose") + "), Node " + process.version +
      ". node_accepts/node_result record what that library's own decode said about each token.",
    secret: SECRET,
    expected_claims: TOKEN,
    vectors,
  };
  process.stdout.write(JSON.stringify(out, null, 2) + "\n");
}

async function decodeStdin() {
  const lines = readFileSync(0, "utf8").split("\n").filter((l) => l.trim() !== "");
  for (const line of lines) {
    const [format, saltArg, token] = line.trim().split(/\s+/);
    const salt = saltArg === "-" ? "" : saltArg;
    console.log(JSON.stringify({ format, salt, ...(await decode(format, salt, token)) }));
  }
}

const mode = process.argv[2];
if (mode === "gen") await gen();
else if (mode === "decode") await decodeStdin();
else { console.error("usage: node interop.mjs gen|decode"); process.exit(2); }
