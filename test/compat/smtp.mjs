// An SMTP catcher: a real SMTP server (smtp-server) that accepts every message
// (plain, no TLS, any or no authentication), parses it with mailparser and
// keeps it in memory so tests can pick the sign-in link out of it.
import { SMTPServer } from "smtp-server";
import { simpleParser } from "mailparser";

export async function startSmtp({ port }) {
  const messages = [];
  const waiters = [];

  const server = new SMTPServer({
    secure: false,
    disabledCommands: ["STARTTLS"],
    authOptional: true,
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, session, cb) {
      cb(null, { user: auth.username });
    },
    onData(stream, session, cb) {
      simpleParser(stream)
        .then((mail) => {
          const msg = {
            envelope: {
              from: session.envelope.mailFrom && session.envelope.mailFrom.address,
              to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
            },
            from: mail.from?.text,
            to: mail.to?.text,
            subject: mail.subject,
            text: mail.text ?? "",
            html: typeof mail.html === "string" ? mail.html : "",
            contentType: mail.headers.get("content-type")?.value,
            at: Date.now(),
          };
          messages.push(msg);
          for (const w of [...waiters]) w();
          cb();
        })
        .catch(cb);
    },
  });
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });

  /** Wait for the next message to `to` that arrived after `since` (ms epoch). */
  async function waitForMail(to, { since = 0, timeout = 10000 } = {}) {
    const find = () => messages.find((m) => m.at >= since && m.envelope.to.includes(to.toLowerCase()));
    const found = find();
    if (found) return found;
    return new Promise((resolve, reject) => {
      const w = () => {
        const m = find();
        if (m) {
          clearTimeout(timer);
          waiters.splice(waiters.indexOf(w), 1);
          resolve(m);
        }
      };
      const timer = setTimeout(() => {
        waiters.splice(waiters.indexOf(w), 1);
        reject(new Error(`no e-mail to ${to} within ${timeout} ms (${messages.length} messages caught in total)`));
      }, timeout);
      waiters.push(w);
    });
  }

  return {
    port,
    url: `smtp://127.0.0.1:${port}`,
    messages,
    waitForMail,
    close: () => new Promise((r) => server.close(r)),
  };
}

/** The first http(s) URL in the text part that contains `/callback/`. */
export function signInLink(msg) {
  const urls = (msg.text.match(/https?:\/\/[^\s<>"']+/g) || []).filter((u) => u.includes("/callback/"));
  return urls[0];
}
