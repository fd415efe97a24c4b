// The real next-auth v4 client (next-auth/react, through test/compat's
// NodeClient and cookie jar, with test/compat's npm packages) signs a user
// in by e-mail at a latchkey, for container_test.go:
//
//   node container_signin.mjs BASE EMAIL CALLBACK_URL
//
// Line by line on stdout/stdin, as JSON: it prints signIn("email")'s result,
// reads the link of the e-mail the Go test caught, opens it in the same
// browser (cookie jar), and prints {status, location, session} where
// session is getSession()'s answer afterwards.
import { createInterface } from "node:readline";
import { CookieJar, jarFetch } from "../compat/jar.mjs";
import { NodeClient } from "../compat/nodeclient.mjs";

const [base, email, callbackUrl] = process.argv.slice(2);
const origin = new URL(base).origin;
const client = new NodeClient({ base, origin }, new CookieJar());
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

const signIn = await client.run((na) => na.signIn("email", { email, redirect: false, callbackUrl }), { windowHref: `${origin}/` });
console.log(JSON.stringify({ signIn, errors: client.lastErrors() }));

const { value: link } = await lines.next();
const res = await jarFetch(client.jar)(link.trim());
await res.text();
const session = await client.run((na) => na.getSession());
console.log(JSON.stringify({ status: res.status, location: res.headers.get("location"), session, errors: client.lastErrors() }));
process.exit(0);
