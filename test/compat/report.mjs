// One line per check: "ok - <name>" or "not ok - <name>: <why>", and a final
// "N passed, M failed" line. A check is an async function that throws on
// failure; its return value (a string) is appended as a note.
import { inspect } from "node:util";

export class Report {
  constructor({ out = console.log } = {}) {
    this.out = out;
    this.passed = 0;
    this.failed = 0;
    this.failures = [];
    this.prefix = "";
  }

  /** A view of this report that prefixes every check name. */
  scope(prefix) {
    const r = Object.create(this);
    r.prefix = this.prefix + prefix;
    return r;
  }

  async check(name, fn) {
    const full = this.prefix + name;
    const t0 = Date.now();
    const slow = () => (Date.now() - t0 > 2000 ? ` [${((Date.now() - t0) / 1000).toFixed(1)} s]` : "");
    try {
      let note = await fn();
      note = (typeof note === "string" ? note : "") + slow();
      this.pass(full, note.trim());
      return true;
    } catch (e) {
      const took = slow();
      this.fail(full + took, e);
      return false;
    }
  }

  pass(full, note) {
    rootOf(this).passed++;
    this.out(`ok - ${full}${typeof note === "string" && note ? ` (${note})` : ""}`);
  }

  fail(full, e) {
    const root = rootOf(this);
    root.failed++;
    const why = e instanceof Error ? e.message : String(e);
    root.failures.push({ name: full, why });
    this.out(`not ok - ${full}: ${why.replace(/\n/g, "\n    ")}`);
  }

  summary() {
    const root = rootOf(this);
    return `${root.passed} passed, ${root.failed} failed`;
  }
}

function rootOf(r) {
  let cur = r;
  while (Object.getPrototypeOf(cur) instanceof Report) cur = Object.getPrototypeOf(cur);
  return cur;
}

export class CheckError extends Error {}

export const show = (v) => (typeof v === "string" ? JSON.stringify(v) : inspect(v, { depth: 6, breakLength: Infinity, compact: true }));

export function assert(cond, why) {
  if (!cond) throw new CheckError(typeof why === "function" ? why() : why);
}

export function eq(actual, expected, what = "value") {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new CheckError(`${what}: expected ${show(expected)}, got ${show(actual)}`);
}
