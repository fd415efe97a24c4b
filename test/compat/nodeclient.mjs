// Runs the published next-auth v4 client (next-auth/react) from plain Node
// against a server, as described in the wire reference §10 "Plain-Node use":
//  - NEXTAUTH_URL is set before the module is loaded (it is read at load time,
//    so the module is loaded afresh for every server);
//  - globalThis.fetch is a cookie-jar fetch that never follows redirects;
//  - signIn/signOut run with a shimmed window.location, which also switches
//    the client to its browser behaviour (relative base path).
import { createRequire } from "node:module";
import path from "node:path";
import { jarFetch } from "./jar.mjs";

const require = createRequire(import.meta.url);

/** Load a fresh copy of next-auth/react bound to nextauthUrl. */
export function loadNextAuthReact(nextauthUrl) {
  const dir = path.dirname(require.resolve("next-auth/react"));
  for (const k of Object.keys(require.cache)) if (k.startsWith(dir + path.sep)) delete require.cache[k];
  const saved = { url: process.env.NEXTAUTH_URL, internal: process.env.NEXTAUTH_URL_INTERNAL };
  process.env.NEXTAUTH_URL = nextauthUrl;
  delete process.env.NEXTAUTH_URL_INTERNAL;
  try {
    return require("next-auth/react");
  } finally {
    if (saved.url === undefined) delete process.env.NEXTAUTH_URL;
    else process.env.NEXTAUTH_URL = saved.url;
    if (saved.internal !== undefined) process.env.NEXTAUTH_URL_INTERNAL = saved.internal;
  }
}

/** A window.location stand-in that records every assignment to href. */
export class FakeLocation {
  constructor(href) {
    this._href = href;
    this.assigned = [];
  }
  get href() {
    return this._href;
  }
  set href(v) {
    this.assigned.push(v);
    this._href = new URL(v, this._href).toString();
  }
  get origin() {
    return new URL(this._href).origin;
  }
  reload() {}
  toString() {
    return this._href;
  }
}

export class NodeClient {
  /**
   * server: {base, origin}; jar: CookieJar.
   * The client module is loaded once per NodeClient (NEXTAUTH_URL = server.base).
   */
  constructor(server, jar, { module } = {}) {
    this.server = server;
    this.jar = jar;
    this.na = module ?? loadNextAuthReact(server.base);
    this.utils = require("next-auth/client/_utils");
    this.errors = [];
  }

  /**
   * Run fn(nextAuthReact) with the jar fetch installed. With windowHref, a
   * shimmed window (location = windowHref) is installed too; the FakeLocation
   * is passed as the second argument.
   */
  async run(fn, { windowHref } = {}) {
    const prevFetch = globalThis.fetch;
    const prevWindow = globalThis.window;
    const prevError = console.error;
    const loc = windowHref ? new FakeLocation(windowHref) : null;
    const log = [];
    globalThis.fetch = jarFetch(this.jar, { base: () => (loc ? loc.href : this.server.base), log });
    if (loc) globalThis.window = { location: loc, addEventListener() {}, removeEventListener() {} };
    console.error = (...a) => this.errors.push(a.map((x) => (x instanceof Error ? x.message : typeof x === "string" ? x : JSON.stringify(x))).join(" "));
    try {
      return await fn(this.na, loc, log);
    } finally {
      globalThis.fetch = prevFetch;
      if (prevWindow === undefined) delete globalThis.window;
      else globalThis.window = prevWindow;
      console.error = prevError;
    }
  }

  /** The client's own fetchData, as used by useSession().update(data). */
  async updateSession(data) {
    const base = new URL(this.server.base);
    const __NEXTAUTH = { baseUrl: base.origin, basePath: base.pathname, baseUrlServer: base.origin, basePathServer: base.pathname };
    const logger = { error: (...a) => this.errors.push(a.map(String).join(" ")), warn() {}, debug() {} };
    return this.run(async (na) => {
      const csrfToken = await na.getCsrfToken();
      return this.utils.fetchData("session", __NEXTAUTH, logger, { req: { body: { csrfToken, data } } });
    });
  }

  lastErrors(n = 3) {
    return this.errors.slice(-n).join(" | ");
  }
}
