// Package schema is the database's history: every schema change as a
// numbered step with its SQL for SQLite and for PostgreSQL. The store
// (models) applies them (models/migrations.go); nothing else reads them.
package schema

// Step is one numbered schema change, written for each dialect. Steps are
// never edited once released: a change is a new step.
type Step struct {
	Version  int
	Name     string
	SQLite   []string
	Postgres []string
}

// Steps are the schema's history. Version 1 is the schema that
// latchkey's earlier AutoMigrate created, so such SQLite files are adopted
// as version 1 and go on from there.
var Steps = []Step{
	{
		Version: 1,
		Name:    "users, accounts, sessions, verification_tokens",
		SQLite: []string{
			"CREATE TABLE IF NOT EXISTS `users` (`id` text,`name` text,`email` text,`email_verified` datetime,`image` text,`created_at` datetime,`updated_at` datetime,PRIMARY KEY (`id`))",
			"CREATE UNIQUE INDEX IF NOT EXISTS `idx_users_email` ON `users`(`email`)",
			"CREATE TABLE IF NOT EXISTS `accounts` (`id` text,`user_id` text NOT NULL,`type` text NOT NULL,`provider` text NOT NULL,`provider_account_id` text NOT NULL,`refresh_token` text,`access_token` text,`expires_at` integer,`token_type` text,`scope` text,`id_token` text,`session_state` text,`created_at` datetime,PRIMARY KEY (`id`),CONSTRAINT `fk_accounts_user` FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON DELETE CASCADE)",
			"CREATE UNIQUE INDEX IF NOT EXISTS `idx_accounts_provider_account` ON `accounts`(`provider`,`provider_account_id`)",
			"CREATE INDEX IF NOT EXISTS `idx_accounts_user_id` ON `accounts`(`user_id`)",
			"CREATE TABLE IF NOT EXISTS `sessions` (`id` text,`token_hash` text NOT NULL,`user_id` text NOT NULL,`expires` datetime NOT NULL,`created_at` datetime,PRIMARY KEY (`id`),CONSTRAINT `fk_sessions_user` FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON DELETE CASCADE)",
			"CREATE INDEX IF NOT EXISTS `idx_sessions_expires` ON `sessions`(`expires`)",
			"CREATE INDEX IF NOT EXISTS `idx_sessions_user_id` ON `sessions`(`user_id`)",
			"CREATE UNIQUE INDEX IF NOT EXISTS `idx_sessions_token_hash` ON `sessions`(`token_hash`)",
			"CREATE TABLE IF NOT EXISTS `verification_tokens` (`identifier` text,`token_hash` text,`expires` datetime NOT NULL,PRIMARY KEY (`identifier`,`token_hash`))",
			"CREATE INDEX IF NOT EXISTS `idx_verification_tokens_expires` ON `verification_tokens`(`expires`)",
			"CREATE UNIQUE INDEX IF NOT EXISTS `idx_verification_identifier_token` ON `verification_tokens`(`identifier`,`token_hash`)",
		},
		Postgres: []string{
			`CREATE TABLE users (id varchar(36) PRIMARY KEY, name text, email text, email_verified timestamptz,
				image text, created_at timestamptz, updated_at timestamptz)`,
			`CREATE UNIQUE INDEX idx_users_email ON users (email)`,
			`CREATE TABLE accounts (id varchar(36) PRIMARY KEY,
				user_id varchar(36) NOT NULL CONSTRAINT fk_accounts_user REFERENCES users(id) ON DELETE CASCADE,
				type text NOT NULL, provider text NOT NULL, provider_account_id text NOT NULL, refresh_token text,
				access_token text, expires_at bigint, token_type text, scope text, id_token text, session_state text,
				created_at timestamptz)`,
			`CREATE UNIQUE INDEX idx_accounts_provider_account ON accounts (provider, provider_account_id)`,
			`CREATE INDEX idx_accounts_user_id ON accounts (user_id)`,
			`CREATE TABLE sessions (id varchar(36) PRIMARY KEY, token_hash varchar(64) NOT NULL,
				user_id varchar(36) NOT NULL CONSTRAINT fk_sessions_user REFERENCES users(id) ON DELETE CASCADE,
				expires timestamptz NOT NULL, created_at timestamptz)`,
			`CREATE INDEX idx_sessions_expires ON sessions (expires)`,
			`CREATE INDEX idx_sessions_user_id ON sessions (user_id)`,
			`CREATE UNIQUE INDEX idx_sessions_token_hash ON sessions (token_hash)`,
			`CREATE TABLE verification_tokens (identifier text NOT NULL, token_hash varchar(64) NOT NULL,
				expires timestamptz NOT NULL, PRIMARY KEY (identifier, token_hash))`,
			`CREATE INDEX idx_verification_tokens_expires ON verification_tokens (expires)`,
			`CREATE UNIQUE INDEX idx_verification_identifier_token ON verification_tokens (identifier, token_hash)`,
		},
	},
	{
		Version: 2,
		Name:    "unique index on verification_tokens.token_hash",
		// Hashes are sha256(random token + secret), so two rows share one only
		// by a bug or a hand edit; the index could not be created over them.
		// Such a link is ambiguous (the callback cannot tell which address it
		// was sent to), so every row of a shared hash goes: its holder asks for
		// a new link.
		SQLite: []string{
			`DELETE FROM verification_tokens WHERE token_hash IN
				(SELECT token_hash FROM verification_tokens GROUP BY token_hash HAVING COUNT(*) > 1)`,
			"CREATE UNIQUE INDEX IF NOT EXISTS `idx_verification_tokens_token_hash` ON `verification_tokens`(`token_hash`)",
		},
		Postgres: []string{
			`DELETE FROM verification_tokens WHERE token_hash IN
				(SELECT token_hash FROM verification_tokens GROUP BY token_hash HAVING COUNT(*) > 1)`,
			`CREATE UNIQUE INDEX idx_verification_tokens_token_hash ON verification_tokens (token_hash)`,
		},
	},
	{
		Version: 3,
		Name:    "rate_limits",
		// The e-mail rate limits' buckets, shared by every instance (see
		// RateLimit). No index on full_at: only allowed sends write rows (at
		// most one per tier per e-mail sent in a window), so the hourly purge
		// reads the whole small table cheaply, and without an index on the
		// column every take changes, PostgreSQL can update rows in place
		// (HOT). SQLite: WITHOUT ROWID, as the table is only ever reached by
		// its text key.
		SQLite: []string{
			"CREATE TABLE `rate_limits` (`bucket` text NOT NULL,`full_at` integer NOT NULL,PRIMARY KEY (`bucket`)) WITHOUT ROWID",
		},
		Postgres: []string{
			`CREATE TABLE rate_limits (bucket text PRIMARY KEY, full_at bigint NOT NULL)`,
		},
	},
	{
		Version: 4,
		Name:    "session_revocations",
		// Per-user "not before" times of `latchkey sessions revoke` and
		// `users delete` (see SessionRevocation), which every instance polls
		// to refuse revoked JWT sessions. No foreign key: a deleted user's
		// row must outlive the user, and "*" is every user.
		SQLite: []string{
			"CREATE TABLE `session_revocations` (`user_id` text NOT NULL,`not_before` integer NOT NULL,PRIMARY KEY (`user_id`)) WITHOUT ROWID",
		},
		Postgres: []string{
			`CREATE TABLE session_revocations (user_id text PRIMARY KEY, not_before bigint NOT NULL)`,
		},
	},
	{
		Version: 5,
		Name:    "passwords, password_throttles",
		// passwords: one Argon2id PHC string per user (see Password), in its
		// own table rather than a users column so that no read of users (the
		// session join, the admin listings, the JSON of a user) can carry a
		// hash by accident, and so a user has no password row at all until
		// one is set. password_throttles: the failure counters of password
		// sign-in (see PasswordThrottle), times in microseconds like
		// rate_limits.
		SQLite: []string{
			"CREATE TABLE `passwords` (`user_id` text NOT NULL,`hash` text NOT NULL,`updated_at` datetime NOT NULL,PRIMARY KEY (`user_id`),CONSTRAINT `fk_passwords_user` FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON DELETE CASCADE)",
			"CREATE TABLE `password_throttles` (`bucket` text NOT NULL,`failures` integer NOT NULL,`blocked_until` integer NOT NULL,`expires` integer NOT NULL,PRIMARY KEY (`bucket`)) WITHOUT ROWID",
		},
		Postgres: []string{
			`CREATE TABLE passwords (user_id varchar(36) PRIMARY KEY
				CONSTRAINT fk_passwords_user REFERENCES users(id) ON DELETE CASCADE,
				hash text NOT NULL, updated_at timestamptz NOT NULL)`,
			`CREATE TABLE password_throttles (bucket text PRIMARY KEY, failures integer NOT NULL,
				blocked_until bigint NOT NULL, expires bigint NOT NULL)`,
		},
	},
	{
		Version: 6,
		Name:    "authenticators, webauthn_challenges",
		// Passkeys (see Authenticator) and the WebAuthn challenges already
		// answered (see UsedChallenge), which make each challenge single-use
		// across instances until it expires.
		SQLite: []string{
			"CREATE TABLE `authenticators` (`id` text,`user_id` text NOT NULL,`credential_id` text NOT NULL,`public_key` blob NOT NULL,`sign_count` integer NOT NULL DEFAULT 0,`transports` text NOT NULL DEFAULT '',`backup_eligible` numeric NOT NULL DEFAULT false,`backup_state` numeric NOT NULL DEFAULT false,`aaguid` blob,`name` text NOT NULL DEFAULT '',`created_at` datetime,`last_used_at` datetime,PRIMARY KEY (`id`),CONSTRAINT `fk_authenticators_user` FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON DELETE CASCADE)",
			"CREATE UNIQUE INDEX `idx_authenticators_credential_id` ON `authenticators`(`credential_id`)",
			"CREATE INDEX `idx_authenticators_user_id` ON `authenticators`(`user_id`)",
			"CREATE TABLE `webauthn_challenges` (`challenge_hash` text NOT NULL,`expires` integer NOT NULL,PRIMARY KEY (`challenge_hash`)) WITHOUT ROWID",
		},
		Postgres: []string{
			`CREATE TABLE authenticators (id varchar(36) PRIMARY KEY,
				user_id varchar(36) NOT NULL CONSTRAINT fk_authenticators_user REFERENCES users(id) ON DELETE CASCADE,
				credential_id text NOT NULL, public_key bytea NOT NULL, sign_count bigint NOT NULL DEFAULT 0,
				transports text NOT NULL DEFAULT '', backup_eligible boolean NOT NULL DEFAULT false,
				backup_state boolean NOT NULL DEFAULT false, aaguid bytea, name text NOT NULL DEFAULT '',
				created_at timestamptz, last_used_at timestamptz)`,
			`CREATE UNIQUE INDEX idx_authenticators_credential_id ON authenticators (credential_id)`,
			`CREATE INDEX idx_authenticators_user_id ON authenticators (user_id)`,
			`CREATE TABLE webauthn_challenges (challenge_hash text PRIMARY KEY, expires bigint NOT NULL)`,
		},
	},
	{
		Version: 7,
		Name:    "password_signups",
		// The password chosen at a sign-up whose address is not confirmed
		// yet (see PasswordSignUp): no user row exists until it is. The
		// link's token is a verification_tokens row; this one goes with it
		// (ON DELETE CASCADE), so spending, deleting or purging the token
		// removes the pending password too.
		SQLite: []string{
			"CREATE TABLE `password_signups` (`token_hash` text NOT NULL,`password_hash` text NOT NULL,PRIMARY KEY (`token_hash`),CONSTRAINT `fk_password_signups_token` FOREIGN KEY (`token_hash`) REFERENCES `verification_tokens`(`token_hash`) ON DELETE CASCADE) WITHOUT ROWID",
		},
		Postgres: []string{
			`CREATE TABLE password_signups (token_hash varchar(64) PRIMARY KEY
				CONSTRAINT fk_password_signups_token REFERENCES verification_tokens(token_hash) ON DELETE CASCADE,
				password_hash text NOT NULL)`,
		},
	},
	{
		Version: 8,
		Name:    "two_factors, recovery_codes, second_steps, sessions.amr",
		// Two-factor sign-in (issue #28). two_factors: one authenticator-app
		// secret per user (see TwoFactor); recovery_codes: its single-use
		// codes, hashed (see RecoveryCode); second_steps: sign-ins waiting
		// for their second factor (see SecondStep), found by token hash and
		// purged by expires. All go with their user (ON DELETE CASCADE).
		// sessions.amr: how the session's sign-in was made (RFC 8176
		// values, space-separated); '' for sessions made before, whose
		// methods are unknown.
		SQLite: []string{
			"CREATE TABLE `two_factors` (`user_id` text NOT NULL,`secret` text NOT NULL,`confirmed_at` datetime,`last_step` integer NOT NULL DEFAULT 0,`failures` integer NOT NULL DEFAULT 0,`blocked_until` datetime,`device_key` text NOT NULL,`created_at` datetime,`updated_at` datetime,PRIMARY KEY (`user_id`),CONSTRAINT `fk_two_factors_user` FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON DELETE CASCADE)",
			"CREATE TABLE `recovery_codes` (`id` text NOT NULL,`user_id` text NOT NULL,`code_hash` text NOT NULL,`used_at` datetime,`created_at` datetime,PRIMARY KEY (`id`),CONSTRAINT `fk_recovery_codes_user` FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON DELETE CASCADE)",
			"CREATE INDEX `idx_recovery_codes_user_id` ON `recovery_codes`(`user_id`)",
			"CREATE TABLE `second_steps` (`token_hash` text NOT NULL,`user_id` text NOT NULL,`provider` text NOT NULL,`methods` text NOT NULL,`callback_url` text NOT NULL,`is_new` numeric NOT NULL DEFAULT false,`enrol` numeric NOT NULL DEFAULT false,`attempts` integer NOT NULL DEFAULT 0,`expires` datetime NOT NULL,`created_at` datetime,PRIMARY KEY (`token_hash`),CONSTRAINT `fk_second_steps_user` FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON DELETE CASCADE)",
			"CREATE INDEX `idx_second_steps_user_id` ON `second_steps`(`user_id`)",
			"CREATE INDEX `idx_second_steps_expires` ON `second_steps`(`expires`)",
			"ALTER TABLE `sessions` ADD COLUMN `amr` text NOT NULL DEFAULT ''",
		},
		Postgres: []string{
			`CREATE TABLE two_factors (user_id varchar(36) PRIMARY KEY
				CONSTRAINT fk_two_factors_user REFERENCES users(id) ON DELETE CASCADE,
				secret text NOT NULL, confirmed_at timestamptz, last_step bigint NOT NULL DEFAULT 0,
				failures integer NOT NULL DEFAULT 0, blocked_until timestamptz, device_key text NOT NULL,
				created_at timestamptz, updated_at timestamptz)`,
			`CREATE TABLE recovery_codes (id varchar(36) PRIMARY KEY,
				user_id varchar(36) NOT NULL CONSTRAINT fk_recovery_codes_user REFERENCES users(id) ON DELETE CASCADE,
				code_hash varchar(64) NOT NULL, used_at timestamptz, created_at timestamptz)`,
			`CREATE INDEX idx_recovery_codes_user_id ON recovery_codes (user_id)`,
			`CREATE TABLE second_steps (token_hash varchar(64) PRIMARY KEY,
				user_id varchar(36) NOT NULL CONSTRAINT fk_second_steps_user REFERENCES users(id) ON DELETE CASCADE,
				provider text NOT NULL, methods text NOT NULL, callback_url text NOT NULL,
				is_new boolean NOT NULL DEFAULT false, enrol boolean NOT NULL DEFAULT false,
				attempts integer NOT NULL DEFAULT 0, expires timestamptz NOT NULL, created_at timestamptz)`,
			`CREATE INDEX idx_second_steps_user_id ON second_steps (user_id)`,
			`CREATE INDEX idx_second_steps_expires ON second_steps (expires)`,
			`ALTER TABLE sessions ADD COLUMN amr text NOT NULL DEFAULT ''`,
		},
	},
	{
		Version: 9,
		Name:    "sessions.device, network, last_seen; accounts.label; sign_ins",
		// The account page (issue #29). sessions.device and network: a
		// readable summary of the user agent and a coarse network hint
		// ('' for sessions made before); last_seen: when the session was
		// last extended (NULL before). GET /session's lookup reads none of
		// them. accounts.label: the provider-side e-mail or login shown for
		// a linked identity (NULL: unknown). sign_ins: one row per jwt
		// sign-in (its token's sid), so each can be listed and ended; every
		// instance polls the ended, unexpired ids (the partial index keeps
		// that poll to the few ended rows), and the purge deletes rows past
		// expires (the sign-in's absolute end). All go with their user (ON
		// DELETE CASCADE).
		SQLite: []string{
			"ALTER TABLE `sessions` ADD COLUMN `device` text NOT NULL DEFAULT ''",
			"ALTER TABLE `sessions` ADD COLUMN `network` text NOT NULL DEFAULT ''",
			"ALTER TABLE `sessions` ADD COLUMN `last_seen` datetime",
			"ALTER TABLE `accounts` ADD COLUMN `label` text",
			"CREATE TABLE `sign_ins` (`id` text NOT NULL,`user_id` text NOT NULL,`device` text NOT NULL DEFAULT '',`network` text NOT NULL DEFAULT '',`created_at` datetime NOT NULL,`last_seen` datetime NOT NULL,`expires` datetime NOT NULL,`ended_at` datetime,PRIMARY KEY (`id`),CONSTRAINT `fk_sign_ins_user` FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON DELETE CASCADE)",
			"CREATE INDEX `idx_sign_ins_user_id` ON `sign_ins`(`user_id`)",
			"CREATE INDEX `idx_sign_ins_expires` ON `sign_ins`(`expires`)",
			"CREATE INDEX `idx_sign_ins_ended_at` ON `sign_ins`(`ended_at`) WHERE `ended_at` IS NOT NULL",
		},
		Postgres: []string{
			`ALTER TABLE sessions ADD COLUMN device text NOT NULL DEFAULT ''`,
			`ALTER TABLE sessions ADD COLUMN network text NOT NULL DEFAULT ''`,
			`ALTER TABLE sessions ADD COLUMN last_seen timestamptz`,
			`ALTER TABLE accounts ADD COLUMN label text`,
			`CREATE TABLE sign_ins (id text PRIMARY KEY,
				user_id varchar(36) NOT NULL CONSTRAINT fk_sign_ins_user REFERENCES users(id) ON DELETE CASCADE,
				device text NOT NULL DEFAULT '', network text NOT NULL DEFAULT '', created_at timestamptz NOT NULL,
				last_seen timestamptz NOT NULL, expires timestamptz NOT NULL, ended_at timestamptz)`,
			`CREATE INDEX idx_sign_ins_user_id ON sign_ins (user_id)`,
			`CREATE INDEX idx_sign_ins_expires ON sign_ins (expires)`,
			`CREATE INDEX idx_sign_ins_ended_at ON sign_ins (ended_at) WHERE ended_at IS NOT NULL`,
		},
	},
	{
		Version: 10,
		Name:    "oidc_clients, oidc_auth_requests, oidc_tokens, oidc_consents, oidc_signing_keys, user_groups",
		// The OpenID Provider (issue #30, models/openidstore) and groups
		// (models/groupstore). Tokens, consents and groups go with their
		// user (ON DELETE CASCADE); auth requests name a user only once
		// completed and expire within minutes, so they keep no key to it.
		SQLite: []string{
			"CREATE TABLE `oidc_clients` (`id` text NOT NULL,`name` text NOT NULL,`secret_hash` text NOT NULL,`public` numeric NOT NULL,`redirect_uris` text NOT NULL,`post_logout_redirect_uris` text NOT NULL,`scopes` text NOT NULL,`first_party` numeric NOT NULL,`refresh_tokens` numeric NOT NULL,`created_at` datetime,`updated_at` datetime,PRIMARY KEY (`id`))",
			"CREATE TABLE `oidc_auth_requests` (`id` text NOT NULL,`client_id` text NOT NULL,`redirect_uri` text NOT NULL,`scopes` text NOT NULL,`state` text NOT NULL,`nonce` text NOT NULL,`response_type` text NOT NULL,`response_mode` text NOT NULL,`code_challenge` text NOT NULL,`code_challenge_method` text NOT NULL,`prompt` text NOT NULL,`max_age` integer,`login_hint` text NOT NULL,`hint_subject` text NOT NULL,`ui_locales` text NOT NULL,`user_id` text,`auth_time` datetime,`amr` text NOT NULL,`done_at` datetime,`login_asked_at` datetime,`code_hash` text,`exchanged_at` datetime,`created_at` datetime,`expires` datetime NOT NULL,PRIMARY KEY (`id`))",
			"CREATE UNIQUE INDEX `idx_oidc_auth_requests_code_hash` ON `oidc_auth_requests`(`code_hash`)",
			"CREATE INDEX `idx_oidc_auth_requests_expires` ON `oidc_auth_requests`(`expires`)",
			"CREATE TABLE `oidc_tokens` (`id` text NOT NULL,`kind` text NOT NULL,`token_hash` text,`family_id` text NOT NULL,`user_id` text NOT NULL,`client_id` text NOT NULL,`scopes` text NOT NULL,`audience` text NOT NULL,`auth_time` datetime NOT NULL,`amr` text NOT NULL,`expires` datetime NOT NULL,`used_at` datetime,`revoked_at` datetime,`created_at` datetime,PRIMARY KEY (`id`),CONSTRAINT `fk_oidc_tokens_user` FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON DELETE CASCADE)",
			"CREATE UNIQUE INDEX `idx_oidc_tokens_token_hash` ON `oidc_tokens`(`token_hash`)",
			"CREATE INDEX `idx_oidc_tokens_family_id` ON `oidc_tokens`(`family_id`)",
			"CREATE INDEX `idx_oidc_tokens_user_id` ON `oidc_tokens`(`user_id`)",
			"CREATE INDEX `idx_oidc_tokens_expires` ON `oidc_tokens`(`expires`)",
			"CREATE TABLE `oidc_consents` (`user_id` text NOT NULL,`client_id` text NOT NULL,`scopes` text NOT NULL,`created_at` datetime,`updated_at` datetime,PRIMARY KEY (`user_id`,`client_id`),CONSTRAINT `fk_oidc_consents_user` FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON DELETE CASCADE)",
			"CREATE TABLE `oidc_signing_keys` (`id` text NOT NULL,`algorithm` text NOT NULL,`public_jwk` text NOT NULL,`private_key` text NOT NULL,`created_at` datetime,`active_from` datetime NOT NULL,`published_until` datetime,PRIMARY KEY (`id`))",
			"CREATE TABLE `user_groups` (`user_id` text NOT NULL,`name` text NOT NULL,`created_at` datetime,PRIMARY KEY (`user_id`,`name`),CONSTRAINT `fk_user_groups_user` FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON DELETE CASCADE)",
		},
		Postgres: []string{
			`CREATE TABLE oidc_clients (id text PRIMARY KEY, name text NOT NULL, secret_hash text NOT NULL,
				public boolean NOT NULL, redirect_uris text NOT NULL, post_logout_redirect_uris text NOT NULL,
				scopes text NOT NULL, first_party boolean NOT NULL, refresh_tokens boolean NOT NULL,
				created_at timestamptz, updated_at timestamptz)`,
			`CREATE TABLE oidc_auth_requests (id text PRIMARY KEY, client_id text NOT NULL, redirect_uri text NOT NULL,
				scopes text NOT NULL, state text NOT NULL, nonce text NOT NULL, response_type text NOT NULL,
				response_mode text NOT NULL, code_challenge text NOT NULL, code_challenge_method text NOT NULL,
				prompt text NOT NULL, max_age bigint, login_hint text NOT NULL, hint_subject text NOT NULL,
				ui_locales text NOT NULL,
				user_id varchar(36), auth_time timestamptz, amr text NOT NULL,
				done_at timestamptz, login_asked_at timestamptz, code_hash varchar(64), exchanged_at timestamptz,
				created_at timestamptz, expires timestamptz NOT NULL)`,
			`CREATE UNIQUE INDEX idx_oidc_auth_requests_code_hash ON oidc_auth_requests (code_hash)`,
			`CREATE INDEX idx_oidc_auth_requests_expires ON oidc_auth_requests (expires)`,
			`CREATE TABLE oidc_tokens (id text PRIMARY KEY, kind text NOT NULL, token_hash varchar(64),
				family_id text NOT NULL,
				user_id varchar(36) NOT NULL CONSTRAINT fk_oidc_tokens_user REFERENCES users(id) ON DELETE CASCADE,
				client_id text NOT NULL, scopes text NOT NULL, audience text NOT NULL, auth_time timestamptz NOT NULL,
				amr text NOT NULL, expires timestamptz NOT NULL, used_at timestamptz,
				revoked_at timestamptz, created_at timestamptz)`,
			`CREATE UNIQUE INDEX idx_oidc_tokens_token_hash ON oidc_tokens (token_hash)`,
			`CREATE INDEX idx_oidc_tokens_family_id ON oidc_tokens (family_id)`,
			`CREATE INDEX idx_oidc_tokens_user_id ON oidc_tokens (user_id)`,
			`CREATE INDEX idx_oidc_tokens_expires ON oidc_tokens (expires)`,
			`CREATE TABLE oidc_consents (
				user_id varchar(36) NOT NULL CONSTRAINT fk_oidc_consents_user REFERENCES users(id) ON DELETE CASCADE,
				client_id text NOT NULL, scopes text NOT NULL, created_at timestamptz, updated_at timestamptz,
				PRIMARY KEY (user_id, client_id))`,
			`CREATE TABLE oidc_signing_keys (id text PRIMARY KEY, algorithm text NOT NULL, public_jwk text NOT NULL,
				private_key text NOT NULL, created_at timestamptz, active_from timestamptz NOT NULL,
				published_until timestamptz)`,
			`CREATE TABLE user_groups (
				user_id varchar(36) NOT NULL CONSTRAINT fk_user_groups_user REFERENCES users(id) ON DELETE CASCADE,
				name text NOT NULL, created_at timestamptz, PRIMARY KEY (user_id, name))`,
		},
	},
	{
		Version: 11,
		Name:    "import_ledger",
		// `latchkey import next-auth` (issue #33, models/importstore): every
		// row an import brought in or found, so that a later run does not
		// bring back a session signed out, a link used, an account unlinked
		// or a user deleted in latchkey since.
		SQLite: []string{
			"CREATE TABLE `import_ledger` (`kind` text NOT NULL,`key` text NOT NULL,`imported_at` datetime NOT NULL,PRIMARY KEY (`kind`,`key`))",
		},
		Postgres: []string{
			`CREATE TABLE import_ledger (kind text NOT NULL, key text NOT NULL, imported_at timestamptz NOT NULL,
				PRIMARY KEY (kind, key))`,
		},
	},
	{
		Version: 12,
		Name:    "webhook_deliveries",
		// Signed webhooks (issue #34, models/webhookstore): the outbox, one
		// row per (event, endpoint), inserted in the transaction of the
		// change it reports. Workers on any instance claim due pending rows
		// with a lease (lease_owner, lease_until); idx_webhook_deliveries_due
		// keeps that claim to the due rows. body is the event's JSON, signed
		// at each attempt; last_error never holds a body or a secret.
		SQLite: []string{
			"CREATE TABLE `webhook_deliveries` (`event_id` text NOT NULL,`endpoint` text NOT NULL,`type` text NOT NULL,`body` text NOT NULL,`status` text NOT NULL,`attempts` integer NOT NULL DEFAULT 0,`next_at` datetime NOT NULL,`lease_owner` text NOT NULL DEFAULT '',`lease_until` datetime,`last_status` integer NOT NULL DEFAULT 0,`last_error` text NOT NULL DEFAULT '',`created_at` datetime NOT NULL,`delivered_at` datetime,PRIMARY KEY (`event_id`,`endpoint`))",
			"CREATE INDEX `idx_webhook_deliveries_due` ON `webhook_deliveries`(`status`,`next_at`)",
		},
		Postgres: []string{
			`CREATE TABLE webhook_deliveries (event_id varchar(40) NOT NULL, endpoint varchar(64) NOT NULL,
				type text NOT NULL, body text NOT NULL, status text NOT NULL, attempts integer NOT NULL DEFAULT 0,
				next_at timestamptz NOT NULL, lease_owner text NOT NULL DEFAULT '', lease_until timestamptz,
				last_status integer NOT NULL DEFAULT 0, last_error text NOT NULL DEFAULT '',
				created_at timestamptz NOT NULL, delivered_at timestamptz, PRIMARY KEY (event_id, endpoint))`,
			`CREATE INDEX idx_webhook_deliveries_due ON webhook_deliveries (status, next_at)`,
		},
	},
	{
		Version: 13,
		Name:    "accounts: token_error, refresh lease",
		// Provider tokens (issue #35, models/tokenstore): token_error marks
		// an account whose refresh token the provider refused
		// (RefreshAccessTokenError) until the user signs in with it again;
		// the lease (its owner, and until when in epoch milliseconds) lets
		// one request of all instances refresh the account's token. The
		// tokens already stored are sealed or cleared by a start-up data
		// step, which knows the providers' store_tokens (a schema step does
		// not): docs/provider-tokens.md.
		SQLite: []string{
			"ALTER TABLE `accounts` ADD COLUMN `token_error` text",
			"ALTER TABLE `accounts` ADD COLUMN `refresh_lease_owner` text",
			"ALTER TABLE `accounts` ADD COLUMN `refresh_lease_until` integer",
		},
		Postgres: []string{
			`ALTER TABLE accounts ADD COLUMN token_error text`,
			`ALTER TABLE accounts ADD COLUMN refresh_lease_owner text`,
			`ALTER TABLE accounts ADD COLUMN refresh_lease_until bigint`,
		},
	},
	{
		Version: 14,
		Name:    "keyset indexes of the admin listings",
		// `latchkey users list` and `sessions list` page by keyset (issue
		// #36, models/adminstore): each page is a range scan of one of these
		// indexes, in its order, whatever the size of the table.
		SQLite: []string{
			"CREATE INDEX IF NOT EXISTS `idx_users_created_at_id` ON `users`(`created_at`,`id`)",
			"CREATE INDEX IF NOT EXISTS `idx_sessions_created_at_id` ON `sessions`(`created_at`,`id`)",
		},
		Postgres: []string{
			`CREATE INDEX IF NOT EXISTS idx_users_created_at_id ON users (created_at, id)`,
			`CREATE INDEX IF NOT EXISTS idx_sessions_created_at_id ON sessions (created_at, id)`,
		},
	},
	{
		Version: 15,
		Name:    "SQLite: covering indexes of GET /session's lookup",
		// GET /session's one query (models.Store.ReadSession) descended four
		// B-trees on SQLite: the token_hash index, the sessions table, the
		// users key and the users table. Past the page cache each descent
		// ends in a leaf read from the file, so at 10⁷ sessions a lookup cost
		// four times its CPU on a small database (issue #36). These indexes
		// hold every column the lookup reads, so it reads one leaf of each
		// and never the tables: half the growth, for an index entry more per
		// session write. PostgreSQL's lookup already costs the same at every
		// size (its round trip dominates); it gets nothing.
		SQLite: []string{
			"CREATE INDEX IF NOT EXISTS `idx_sessions_lookup` ON `sessions`(`token_hash`,`user_id`,`expires`,`created_at`,`amr`)",
			"CREATE INDEX IF NOT EXISTS `idx_users_lookup` ON `users`(`id`,`name`,`email`,`image`,`email_verified`)",
		},
		Postgres: []string{},
	},
	{
		Version: 16,
		Name:    "webhook_deliveries.queued_at",
		// When an operator's retry queued a failed delivery again (NULL: not
		// since it was written, so created_at). The outbox's "oldest
		// pending" age counts from it: measured from created_at, a retry of
		// a days-old event reported days of waiting at once and fired the
		// documented alert on a backlog the operator had just cleared.
		SQLite: []string{
			"ALTER TABLE `webhook_deliveries` ADD COLUMN `queued_at` datetime",
		},
		Postgres: []string{
			`ALTER TABLE webhook_deliveries ADD COLUMN queued_at timestamptz`,
		},
	},
	{
		Version: 17,
		Name:    "oidc_clients.previous_secret_hash, previous_secret_until",
		// `latchkey clients rotate-secret --keep-previous` (models/openidstore):
		// the hash of the secret a rotation replaced, accepted beside the
		// new one until previous_secret_until, so that relying parties can
		// be redeployed with the new secret without failing meanwhile. ''
		// and NULL: none (every client before this step).
		SQLite: []string{
			"ALTER TABLE `oidc_clients` ADD COLUMN `previous_secret_hash` text NOT NULL DEFAULT ''",
			"ALTER TABLE `oidc_clients` ADD COLUMN `previous_secret_until` datetime",
		},
		Postgres: []string{
			`ALTER TABLE oidc_clients ADD COLUMN previous_secret_hash text NOT NULL DEFAULT ''`,
			`ALTER TABLE oidc_clients ADD COLUMN previous_secret_until timestamptz`,
		},
	},
	{
		Version: 18,
		Name:    "PostgreSQL: verification_tokens.identifier COLLATE \"C\"",
		// A user's e-mail change links are found by their identifiers'
		// prefix ("email-change:<user id>:"), as a byte-order range
		// (models.IdentifiersFrom): under the database's default collation
		// (en_US and the like) neither that range nor a LIKE can use the
		// identifier index, and opening a change link, deleting an account
		// and signing out everywhere read the whole table. Equality is the
		// same in every deterministic collation, so nothing else changes;
		// the column's indexes are rebuilt (SQLite compares bytes already).
		SQLite: []string{},
		Postgres: []string{
			`ALTER TABLE verification_tokens ALTER COLUMN identifier TYPE text COLLATE "C"`,
		},
	},
}
