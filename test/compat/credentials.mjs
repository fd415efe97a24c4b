// The password user of the credentials checks. latchkey gets it from its
// own admin command (`latchkey users create --password-stdin`, through the
// instance's admin()); the next-auth v4 reference gets a Credentials
// provider whose authorize accepts exactly this address and password.
export const PASSWORD_USER = { email: "pat@example.com", password: "compat pass phrase 42" };

/** Create PASSWORD_USER on a latchkey server (no-op for the reference, whose authorize knows it). */
export async function createPasswordUser(server) {
  if (!server.admin) return;
  const out = await server.admin(["users", "create", PASSWORD_USER.email, "--password-stdin"], PASSWORD_USER.password + "\n");
  if (out.code !== 0 && !out.stderr.includes("exists already")) throw new Error(`users create: exit ${out.code}: ${out.stderr}`);
}
