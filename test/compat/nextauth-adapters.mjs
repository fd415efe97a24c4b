// Real next-auth v4 servers on real database adapters, for the import suite
// (issue #33): the next-auth 4.24.15 handler of nextauth-server.mjs, with its
// providers (the suite's IdP, the e-mail provider on the SMTP catcher), but
// instead of the in-memory adapter
//   - "pg": @auth/pg-adapter on a PostgreSQL database (pg's Pool), the
//     lower-case tables of the adapter's documented schema (PG_SCHEMA);
//   - "kysely": @auth/kysely-adapter on a SQLite file (kysely's SqliteDialect
//     over better-sqlite3), the tables of the adapter's documented Kysely
//     migration, with SQLite's types (createKyselySchema).
// Both are Auth.js adapters; next-auth v4 calls the same adapter methods
// (createUser, getUserByAccount, linkAccount, createSession,
// getSessionAndUser, useVerificationToken, ...), so the rows are the ones
// these adapters really write.
//
// Run as a child process (NEXTAUTH_URL is process-wide):
//   NEXTAUTH_ADAPTER_CONFIG='{"adapter":"pg","database":"postgres://...",...}' node nextauth-adapters.mjs
// The other config keys are nextauth-server.mjs's (port, url, secret, strategy,
// issuer, clientId, clientSecret, smtpUrl, from).
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

/** The SQL schema of @auth/pg-adapter's documentation (authjs.dev, "PostgreSQL Adapter"). */
export const PG_SCHEMA = `
CREATE TABLE verification_token
(
  identifier TEXT NOT NULL,
  expires TIMESTAMPTZ NOT NULL,
  token TEXT NOT NULL,

  PRIMARY KEY (identifier, token)
);

CREATE TABLE accounts
(
  id SERIAL,
  "userId" INTEGER NOT NULL,
  type VARCHAR(255) NOT NULL,
  provider VARCHAR(255) NOT NULL,
  "providerAccountId" VARCHAR(255) NOT NULL,
  refresh_token TEXT,
  access_token TEXT,
  expires_at BIGINT,
  id_token TEXT,
  scope TEXT,
  session_state TEXT,
  token_type TEXT,

  PRIMARY KEY (id)
);

CREATE TABLE sessions
(
  id SERIAL,
  "userId" INTEGER NOT NULL,
  expires TIMESTAMPTZ NOT NULL,
  "sessionToken" VARCHAR(255) NOT NULL,

  PRIMARY KEY (id)
);

CREATE TABLE users
(
  id SERIAL,
  name VARCHAR(255),
  email VARCHAR(255),
  "emailVerified" TIMESTAMPTZ,
  image TEXT,

  PRIMARY KEY (id)
);
`;

/** The table names each adapter's schema uses, quoted for SQL. */
export const TABLES = {
  pg: { users: "users", accounts: "accounts", sessions: "sessions", tokens: "verification_token" },
  kysely: { users: '"User"', accounts: '"Account"', sessions: '"Session"', tokens: '"VerificationToken"' },
};

/**
 * The Kysely adapter's documented migration (authjs.dev, "Kysely Adapter":
 * User, Account, Session, VerificationToken), on SQLite: uuid and timestamptz
 * columns are text there (the adapter writes dates as ISO strings), and
 * gen_random_uuid(), which SQLite lacks, becomes a random hex default for the
 * ids the adapter does not set (Account, Session).
 */
export async function createKyselySchema(file) {
  const { db, sql } = await kysely(file);
  try {
    const uuid = sql`(lower(hex(randomblob(16))))`;
    await db.schema.createTable("User")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("name", "text")
      .addColumn("email", "text", (c) => c.unique().notNull())
      .addColumn("emailVerified", "timestamptz")
      .addColumn("image", "text")
      .execute();
    await db.schema.createTable("Account")
      .addColumn("id", "text", (c) => c.primaryKey().defaultTo(uuid))
      .addColumn("userId", "text", (c) => c.references("User.id").onDelete("cascade").notNull())
      .addColumn("type", "text", (c) => c.notNull())
      .addColumn("provider", "text", (c) => c.notNull())
      .addColumn("providerAccountId", "text", (c) => c.notNull())
      .addColumn("refresh_token", "text")
      .addColumn("access_token", "text")
      .addColumn("expires_at", "bigint")
      .addColumn("token_type", "text")
      .addColumn("scope", "text")
      .addColumn("id_token", "text")
      .addColumn("session_state", "text")
      .execute();
    await db.schema.createTable("Session")
      .addColumn("id", "text", (c) => c.primaryKey().defaultTo(uuid))
      .addColumn("userId", "text", (c) => c.references("User.id").onDelete("cascade").notNull())
      .addColumn("sessionToken", "text", (c) => c.notNull().unique())
      .addColumn("expires", "timestamptz", (c) => c.notNull())
      .execute();
    await db.schema.createTable("VerificationToken")
      .addColumn("identifier", "text", (c) => c.notNull())
      .addColumn("token", "text", (c) => c.notNull().unique())
      .addColumn("expires", "timestamptz", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("Account_userId_index").on("Account").column("userId").execute();
    await db.schema.createIndex("Session_userId_index").on("Session").column("userId").execute();
  } finally {
    await db.destroy();
  }
}

/** Create the documented tables of adapter ("pg": PostgreSQL URL, "kysely": SQLite file). */
export async function createSchema(adapter, database) {
  if (adapter === "kysely") return createKyselySchema(database);
  const db = await openSource("pg", database);
  try {
    await db.query(PG_SCHEMA);
  } finally {
    await db.close();
  }
}

// kysely's ES module build, the one @auth/kysely-adapter imports: it tells
// SQLite by `adapter instanceof SqliteAdapter`, which a Kysely made from the
// CommonJS build fails (then Dates go unconverted to better-sqlite3).
async function kysely(file) {
  const { Kysely, SqliteDialect, sql } = await import("kysely");
  const Database = require("better-sqlite3");
  return { db: new Kysely({ dialect: new SqliteDialect({ database: new Database(file) }) }), sql };
}

/**
 * A connection to a next-auth database, for the suite's own reads and inserts:
 * {query(text, params) -> rows, close()}. Parameters are written $1, $2, ...
 * for both (each used once, in order, on SQLite).
 */
export async function openSource(adapter, database) {
  if (adapter === "pg") {
    const { Client } = require("pg");
    const client = new Client({ connectionString: database });
    await client.connect();
    return {
      async query(text, params = []) {
        return (await client.query(text, params)).rows;
      },
      close: () => client.end(),
    };
  }
  const Database = require("better-sqlite3");
  const db = new Database(database);
  return {
    async query(text, params = []) {
      const order = [...text.matchAll(/\$(\d+)/g)].map((m) => Number(m[1]) - 1);
      const st = db.prepare(text.replace(/\$\d+/g, "?"));
      const args = order.map((i) => params[i]);
      return st.reader ? st.all(...args) : (st.run(...args), []);
    },
    async close() {
      db.close();
    },
  };
}

/** The adapter for cfg: {adapter: "pg"|"kysely", database}. */
async function realAdapter(cfg) {
  if (cfg.adapter === "pg") {
    const { Pool } = require("pg");
    const PostgresAdapter = (await import("@auth/pg-adapter")).default;
    return PostgresAdapter(new Pool({ connectionString: cfg.database, max: 5 }));
  }
  if (cfg.adapter === "kysely") {
    const { KyselyAdapter } = await import("@auth/kysely-adapter");
    return KyselyAdapter((await kysely(cfg.database)).db);
  }
  throw new Error(`unknown adapter ${cfg.adapter}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const cfg = JSON.parse(process.env.NEXTAUTH_ADAPTER_CONFIG);
  const { authOptions, startReference } = await import("./nextauth-server.mjs");
  await startReference(cfg, { ...authOptions(cfg), adapter: await realAdapter(cfg) });
  console.log(`ready ${cfg.port} (${cfg.adapter} adapter, ${cfg.strategy} sessions)`);
}

/**
 * Start next-auth on a real adapter as a child process: cfg as above; its log
 * is {dir}/{name}.log. Returns {name, base, origin, port, log, proc, logTail(n), stop()}.
 */
export async function spawnNextAuth(cfg, { dir, name }) {
  const { spawnLogged, waitHttp, stopChild, logTail } = await import("./procs.mjs");
  fs.mkdirSync(dir, { recursive: true });
  const log = path.join(dir, `${name.replace(/[^a-z0-9]+/gi, "-")}.log`);
  const env = { ...process.env, NEXTAUTH_ADAPTER_CONFIG: JSON.stringify(cfg), NODE_ENV: "development", NEXTAUTH_URL: cfg.url };
  const proc = spawnLogged(process.execPath, [new URL(import.meta.url).pathname], { env, logFile: log });
  await waitHttp(proc, `${cfg.url}/providers`, log);
  return { name, base: cfg.url, origin: new URL(cfg.url).origin, port: cfg.port, log, proc, logTail: (n) => logTail(log, n), stop: () => stopChild(proc) };
}

/** A random id as the Kysely adapter makes them. */
export const newId = () => crypto.randomUUID();
