// The real v4 client's password sign-in (signIn("credentials", ...)) against
// a server with a credentials provider: part of the client suite for the
// variants with credentials: true.
import { CookieJar, jarFetch } from "./jar.mjs";
import { PASSWORD_USER, createPasswordUser } from "./credentials.mjs";
import { assert, eq } from "./report.mjs";
import { FORM, form } from "./util.mjs";

export async function credentialsChecks(t, ctx, server, variant, { newClient, names, app }) {
  const { base, origin } = server;
  const { email, password } = PASSWORD_USER;
  const home = `${origin}/home`;
  await t.check("latchkey users create --password-stdin makes the password user", async () => {
    await createPasswordUser(server);
  });
  await t.check("getProviders lists credentials with v4 fields", async () => {
    const p = await newClient().run((c) => c.getProviders());
    eq(p?.credentials, { id: "credentials", name: "Credentials", type: "credentials", signinUrl: `${base}/signin/credentials`, callbackUrl: `${base}/callback/credentials` }, "providers.credentials");
  });
  const user = newClient();
  let signedIn = false;
  await t.check("signIn(\"credentials\", {redirect:false}) returns {ok, url: callbackUrl}", async () => {
    const r = await user.run((c) => c.signIn("credentials", { email, password, redirect: false, callbackUrl: home }), { windowHref: app });
    eq(r, { error: null, status: 200, ok: true, url: home }, "signIn result");
    assert(user.jar.get(base, names.session), () => `no ${names.session} cookie (jar: ${user.jar.header(base)})`);
    signedIn = true;
  });
  // next-auth v4 itself writes a JWT cookie that its database strategy cannot read
  // (it refuses credentials with database sessions); latchkey starts a real session.
  const sessionExpected = ctx.target === "latchkey" || variant.strategy === "jwt";
  if (sessionExpected) {
    await t.check(`getSession after the password sign-in shows the user (${variant.strategy} sessions)`, async () => {
      assert(signedIn, "not signed in");
      const s = await user.run((c) => c.getSession());
      eq(s?.user?.email, email, "session.user.email");
      eq(Object.keys(s.user).sort(), ["email", "image", "name"], "session.user keys");
    });
    await t.check("signOut after the password sign-in ends the session", async () => {
      assert(signedIn, "not signed in");
      const data = await user.run((c) => c.signOut({ redirect: false, callbackUrl: `${origin}/bye` }), { windowHref: app });
      eq(data, { url: `${origin}/bye` }, "signOut result");
      eq(await user.run((c) => c.getSession()), null, "session after sign-out");
    });
  }
  const refused = { error: "CredentialsSignin", status: 401, ok: false, url: null };
  await t.check("a wrong password gives {error: CredentialsSignin, status: 401}", async () => {
    const c = newClient();
    const r = await c.run((cl) => cl.signIn("credentials", { email, password: "not the password", redirect: false, callbackUrl: home }), { windowHref: app });
    eq(r, refused, "signIn result");
    eq(await c.run((cl) => cl.getSession()), null, "no session");
  });
  await t.check("an unknown address gives the same answer", async () => {
    const c = newClient();
    const r = await c.run((cl) => cl.signIn("credentials", { email: "nobody@example.com", password, redirect: false, callbackUrl: home }), { windowHref: app });
    eq(r, refused, "signIn result");
  });
  await t.check("the raw refusal is 401 {url: {base}/error?error=CredentialsSignin&provider=credentials}", async () => {
    const j = new CookieJar();
    const f = jarFetch(j);
    const { csrfToken } = await (await f(`${base}/csrf`)).json();
    const res = await f(`${base}/callback/credentials`, { method: "POST", headers: FORM, body: form({ email, password: "nope nope nope", csrfToken, json: "true" }) });
    const text = await res.text();
    eq([res.status, JSON.parse(text)], [401, { url: `${base}/error?error=CredentialsSignin&provider=credentials` }], "status and body");
  });
  await t.check("signIn(\"credentials\") without the CSRF cookie looks like success but points at ?csrf=true (v4)", async () => {
    const c = newClient();
    c.jar.store = () => {}; // a client whose cookies get lost
    const r = await c.run((cl) => cl.signIn("credentials", { email, password, redirect: false, callbackUrl: home }), { windowHref: app });
    eq(r, { error: null, status: 200, ok: true, url: `${base}/signin?csrf=true` }, "signIn result");
    eq(await c.run((cl) => cl.getSession()), null, "session after the refused sign-in");
  });
}
