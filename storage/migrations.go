package storage

// A migration is one schema version. Migrations are append-only: a released
// version is never edited, a change is a new version.
type migration struct {
	version int
	name    string
	sql     string // statements separated by ";\n"; see dialectSQL for the placeholders
	// dialect holds statements run after sql on one dialect only, for
	// what the two spell too differently for a placeholder (triggers).
	dialect map[Dialect]string
}

// migrations are every version in order: these, then migrationsLater.
var migrations = append([]migration{
	{1, "initial schema", `
CREATE TABLE accounts (
	id TEXT PRIMARY KEY,
	name TEXT NOT NULL,
	plan TEXT NOT NULL,
	cap INTEGER,
	billing BOOLEAN NOT NULL DEFAULT TRUE,
	created_at BIGINT NOT NULL
);
CREATE TABLE api_keys (
	id TEXT PRIMARY KEY,
	account_id TEXT NOT NULL REFERENCES accounts (id),
	name TEXT NOT NULL DEFAULT '',
	secret_hash TEXT NOT NULL,
	scopes TEXT NOT NULL DEFAULT '[]',
	expires_at BIGINT NOT NULL DEFAULT 0,
	revoked_at BIGINT NOT NULL DEFAULT 0,
	created_at BIGINT NOT NULL
);
CREATE INDEX api_keys_account ON api_keys (account_id);
CREATE TABLE domains (
	id TEXT PRIMARY KEY,
	name TEXT NOT NULL UNIQUE,
	account_id TEXT REFERENCES accounts (id),
	status TEXT NOT NULL DEFAULT 'active',
	caa TEXT NOT NULL DEFAULT '',
	dnssec BOOLEAN NOT NULL DEFAULT FALSE,
	ds_published BOOLEAN NOT NULL DEFAULT FALSE,
	created_at BIGINT NOT NULL
);
CREATE TABLE hostnames (
	id TEXT PRIMARY KEY,
	account_id TEXT NOT NULL REFERENCES accounts (id),
	domain_id TEXT NOT NULL REFERENCES domains (id),
	label TEXT NOT NULL,
	name TEXT NOT NULL,
	ip TEXT NOT NULL,
	status TEXT NOT NULL,
	expires_at BIGINT NOT NULL DEFAULT 0,
	created_at BIGINT NOT NULL,
	updated_at BIGINT NOT NULL,
	released_at BIGINT NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX hostnames_label ON hostnames (domain_id, label) WHERE status <> 'released';
CREATE INDEX hostnames_account ON hostnames (account_id, created_at);
CREATE TABLE retired_labels (
	domain_id TEXT NOT NULL REFERENCES domains (id),
	label TEXT NOT NULL,
	account_id TEXT NOT NULL,
	retired_at BIGINT NOT NULL,
	PRIMARY KEY (domain_id, label)
);
CREATE TABLE changes (
	id {{serial}},
	kind TEXT NOT NULL,
	ref TEXT NOT NULL,
	created_at BIGINT NOT NULL
)`, nil},
	{2, "profile 2: certificate modes, address classes, targets, rate events", `
ALTER TABLE hostnames ADD COLUMN certificate TEXT NOT NULL DEFAULT 'self';
ALTER TABLE hostnames ADD COLUMN ca TEXT NOT NULL DEFAULT '';
ALTER TABLE hostnames ADD COLUMN class TEXT NOT NULL DEFAULT '';
ALTER TABLE hostnames ADD COLUMN target TEXT NOT NULL DEFAULT '';
ALTER TABLE hostnames ADD COLUMN addrs TEXT NOT NULL DEFAULT '';
ALTER TABLE hostnames ADD COLUMN refresh_at BIGINT NOT NULL DEFAULT 0;
UPDATE hostnames SET addrs = ip;
CREATE INDEX hostnames_status ON hostnames (status);
CREATE INDEX hostnames_targets ON hostnames (refresh_at) WHERE target <> '';
CREATE TABLE rate_events (
	id {{serial}},
	account_id TEXT NOT NULL,
	kind TEXT NOT NULL,
	at BIGINT NOT NULL
);
CREATE INDEX rate_events_window ON rate_events (account_id, kind, at)`, nil},
	{3, "caller-published records and DNSSEC keys", `
CREATE TABLE records (
	id TEXT PRIMARY KEY,
	hostname_id TEXT NOT NULL REFERENCES hostnames (id),
	name TEXT NOT NULL,
	type TEXT NOT NULL,
	data TEXT NOT NULL,
	created_at BIGINT NOT NULL,
	updated_at BIGINT NOT NULL
);
CREATE INDEX records_hostname ON records (hostname_id, created_at);
ALTER TABLE domains ADD COLUMN dnskey TEXT NOT NULL DEFAULT '';
ALTER TABLE domains ADD COLUMN dnssec_key TEXT NOT NULL DEFAULT ''`, nil},
	{4, "DNS-01 credentials and challenge values", `
CREATE TABLE acme_credentials (
	id TEXT PRIMARY KEY,
	hostname_id TEXT NOT NULL REFERENCES hostnames (id),
	password_hash TEXT NOT NULL,
	created_at BIGINT NOT NULL
);
CREATE INDEX acme_credentials_hostname ON acme_credentials (hostname_id);
CREATE TABLE challenges (
	id {{serial}},
	hostname_id TEXT NOT NULL REFERENCES hostnames (id),
	value TEXT NOT NULL,
	created_at BIGINT NOT NULL
);
CREATE INDEX challenges_hostname ON challenges (hostname_id, id)`, nil},
	{5, "certificates run by the service", `
CREATE TABLE acme_accounts (
	ca TEXT PRIMARY KEY,
	email TEXT NOT NULL,
	key_sealed TEXT NOT NULL,
	registration TEXT NOT NULL,
	created_at BIGINT NOT NULL
);
CREATE TABLE certificates (
	hostname_id TEXT PRIMARY KEY REFERENCES hostnames (id),
	status TEXT NOT NULL,
	ca TEXT NOT NULL DEFAULT '',
	csr TEXT NOT NULL DEFAULT '',
	chain TEXT NOT NULL DEFAULT '',
	key_sealed TEXT NOT NULL DEFAULT '',
	expires_at BIGINT NOT NULL DEFAULT 0,
	due_at BIGINT NOT NULL DEFAULT 0,
	error TEXT NOT NULL DEFAULT '',
	lease_until BIGINT NOT NULL DEFAULT 0,
	updated_at BIGINT NOT NULL
);
CREATE INDEX certificates_due ON certificates (status, due_at);
ALTER TABLE hostnames ADD COLUMN cert_expires_at BIGINT NOT NULL DEFAULT 0`, nil},
	// An index on status alone cost every write its upkeep and, where
	// statistics lagged, led the planner to scan it whole (all live rows)
	// to count one account's hostnames. Only the pending ones are looked
	// up by status, oldest change first.
	{6, "index pending hostnames only", `
DROP INDEX hostnames_status;
CREATE INDEX hostnames_pending ON hostnames (updated_at) WHERE status = 'pending'`, nil},
	// In the database, not in memory, so that every node sharing it knows
	// a session and sign-out or a used link holds everywhere at once. Both
	// ids are hashes of the secrets the browser holds.
	{7, "dashboard sessions and sign-in links", `
CREATE TABLE dashboard_sessions (
	id TEXT PRIMARY KEY,
	account_id TEXT NOT NULL DEFAULT '',
	expires_at BIGINT NOT NULL,
	created_at BIGINT NOT NULL
);
CREATE INDEX dashboard_sessions_expiry ON dashboard_sessions (expires_at);
CREATE TABLE signin_links (
	id TEXT PRIMARY KEY,
	account_id TEXT NOT NULL REFERENCES accounts (id),
	expires_at BIGINT NOT NULL,
	used_at BIGINT NOT NULL DEFAULT 0,
	created_at BIGINT NOT NULL
);
CREATE INDEX signin_links_expiry ON signin_links (expires_at)`, nil},
	// Read newest first, whole or by one actor, team or object; purged by age.
	{8, "audit log", `
CREATE TABLE audit_log (
	id {{serial}},
	at BIGINT NOT NULL,
	actor TEXT NOT NULL,
	account_id TEXT NOT NULL DEFAULT '',
	action TEXT NOT NULL,
	object TEXT NOT NULL DEFAULT '',
	result TEXT NOT NULL,
	status INTEGER NOT NULL,
	address TEXT NOT NULL DEFAULT ''
);
CREATE INDEX audit_log_at ON audit_log (at);
CREATE INDEX audit_log_actor ON audit_log (actor, id);
CREATE INDEX audit_log_account ON audit_log (account_id, id);
CREATE INDEX audit_log_object ON audit_log (object, id)`, nil},
	// An operator session names the admin token that started it (a salted,
	// slow hash), so that rotating the token ends every operator session.
	{9, "operator sessions bound to the admin token", `
ALTER TABLE dashboard_sessions ADD COLUMN grant_hash TEXT NOT NULL DEFAULT ''`, nil},
	// A write's checks must cost the same at the millionth name as at the
	// first: the cap check reads a counter on the account row (which the
	// write locks anyway) instead of counting the account's hostnames.
	// Triggers keep the counter in the transaction that changes a status,
	// whichever code path, bulk import or copy writes the row. Expired
	// [P1] names stay counted (expiry is read from expires_at, nothing
	// writes at expiry time); the cap check looks them up by the partial
	// index only when the counter says the cap is reached. Pool and team
	// domains are found by their account, not by reading every domain.
	{10, "account counters and indexed look-ups for the write path", `
ALTER TABLE accounts ADD COLUMN active_hostnames BIGINT NOT NULL DEFAULT 0;
` + recountActive + `;
CREATE INDEX hostnames_expiry ON hostnames (account_id, expires_at) WHERE status = 'live' AND expires_at > 0;
CREATE INDEX domains_account ON domains (account_id, created_at)`, map[Dialect]string{
		SQLite: `
CREATE TRIGGER hostnames_active_insert AFTER INSERT ON hostnames WHEN NEW.status IN ('live', 'pending') BEGIN UPDATE accounts SET active_hostnames = active_hostnames + 1 WHERE id = NEW.account_id; END;
CREATE TRIGGER hostnames_active_delete AFTER DELETE ON hostnames WHEN OLD.status IN ('live', 'pending') BEGIN UPDATE accounts SET active_hostnames = active_hostnames - 1 WHERE id = OLD.account_id; END;
CREATE TRIGGER hostnames_active_update AFTER UPDATE OF status, account_id ON hostnames WHEN (OLD.status IN ('live', 'pending')) <> (NEW.status IN ('live', 'pending')) OR OLD.account_id <> NEW.account_id BEGIN UPDATE accounts SET active_hostnames = active_hostnames - 1 WHERE id = OLD.account_id AND OLD.status IN ('live', 'pending'); UPDATE accounts SET active_hostnames = active_hostnames + 1 WHERE id = NEW.account_id AND NEW.status IN ('live', 'pending'); END`,
		// Inserts and deletes are counted once per statement, from its
		// transition table: a bulk load of 5 000 rows is one UPDATE of each
		// account it touches, not 5 000 versions of the account's row.
		Postgres: `
CREATE FUNCTION hostnames_active_added() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN UPDATE accounts SET active_hostnames = active_hostnames + n.c FROM (SELECT account_id, COUNT(*) AS c FROM added WHERE status IN ('live', 'pending') GROUP BY account_id) AS n WHERE accounts.id = n.account_id; RETURN NULL; END $$;
CREATE FUNCTION hostnames_active_removed() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN UPDATE accounts SET active_hostnames = active_hostnames - n.c FROM (SELECT account_id, COUNT(*) AS c FROM removed WHERE status IN ('live', 'pending') GROUP BY account_id) AS n WHERE accounts.id = n.account_id; RETURN NULL; END $$;
CREATE FUNCTION hostnames_active() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF OLD.status IN ('live', 'pending') THEN UPDATE accounts SET active_hostnames = active_hostnames - 1 WHERE id = OLD.account_id; END IF; IF NEW.status IN ('live', 'pending') THEN UPDATE accounts SET active_hostnames = active_hostnames + 1 WHERE id = NEW.account_id; END IF; RETURN NULL; END $$;
CREATE TRIGGER hostnames_active_insert AFTER INSERT ON hostnames REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION hostnames_active_added();
CREATE TRIGGER hostnames_active_delete AFTER DELETE ON hostnames REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION hostnames_active_removed();
CREATE TRIGGER hostnames_active_update AFTER UPDATE OF status, account_id ON hostnames FOR EACH ROW WHEN ((OLD.status IN ('live', 'pending')) IS DISTINCT FROM (NEW.status IN ('live', 'pending')) OR OLD.account_id IS DISTINCT FROM NEW.account_id) EXECUTE FUNCTION hostnames_active()`,
	}},
	// The changes feed is compacted (compact.go): this one row says how far,
	// so that a node (or a secondary asking for IXFR) can tell "deleted" from
	// "never committed". No row: nothing was ever compacted.
	{11, "how far the change feed was compacted", `
CREATE TABLE changes_compacted (
	id INTEGER PRIMARY KEY,
	through BIGINT NOT NULL
)`, nil},
	// A team's access can be closed: suspended by the operator, or ended
	// when its plan ends. Its sessions and sign-in links are found by the
	// account to end them; plans that just ended, by when they ended (a
	// whole index: SQLite uses a partial one only for a query that repeats
	// its condition, and then ranges from that condition's bound).
	{12, "team access: suspension and plan end", `
ALTER TABLE accounts ADD COLUMN suspended_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN plan_ends_at BIGINT NOT NULL DEFAULT 0;
CREATE INDEX accounts_plan_ends ON accounts (plan_ends_at);
CREATE INDEX dashboard_sessions_account ON dashboard_sessions (account_id);
CREATE INDEX signin_links_account ON signin_links (account_id)`, nil},
	// Idle expiries are recorded as changes once they pass (expiry.go), in
	// the order they pass: found through an index of live names by expiry,
	// from a mark of how far they have been recorded. No mark is the
	// beginning, so the names that expired before are recorded too.
	{13, "idle expiries recorded for secondaries", `
CREATE INDEX hostnames_expiring ON hostnames (expires_at, id) WHERE status = 'live';
CREATE TABLE expiry_marks (
	id INTEGER PRIMARY KEY,
	at BIGINT NOT NULL,
	hostname_id TEXT NOT NULL
)`, nil},
	// TSIG keys sign DNS UPDATE (RFC 2136); the protocol needs the secret
	// itself, so it is kept sealed with the certificate encryption key.
	{14, "TSIG keys for DNS UPDATE", `
CREATE TABLE tsig_keys (
	id TEXT PRIMARY KEY,
	account_id TEXT NOT NULL REFERENCES accounts (id),
	name TEXT NOT NULL DEFAULT '',
	key_name TEXT NOT NULL UNIQUE,
	algorithm TEXT NOT NULL,
	secret_sealed TEXT NOT NULL,
	scopes TEXT NOT NULL DEFAULT '[]',
	issued_by TEXT NOT NULL DEFAULT '',
	expires_at BIGINT NOT NULL DEFAULT 0,
	revoked_at BIGINT NOT NULL DEFAULT 0,
	created_at BIGINT NOT NULL
);
CREATE INDEX tsig_keys_account ON tsig_keys (account_id);
CREATE INDEX tsig_keys_issuer ON tsig_keys (issued_by) WHERE issued_by <> '';
CREATE INDEX tsig_keys_active ON tsig_keys (revoked_at, id)`, nil},
	{15, "the writers' heartbeat, by which read-only nodes measure their lag", `
CREATE TABLE heartbeat (
	id INTEGER PRIMARY KEY,
	at BIGINT NOT NULL
)`, map[Dialect]string{
		// A vacuum that truncates a table takes an ACCESS EXCLUSIVE lock,
		// which a hot standby replays by cancelling the reads of that
		// table: a read-only node's snapshot load of a million names.
		// The space at a table's end is reused by later rows anyway.
		Postgres: `ALTER TABLE hostnames SET (vacuum_truncate = false);
ALTER TABLE records SET (vacuum_truncate = false);
ALTER TABLE challenges SET (vacuum_truncate = false);
ALTER TABLE changes SET (vacuum_truncate = false);
ALTER TABLE api_keys SET (vacuum_truncate = false);
ALTER TABLE tsig_keys SET (vacuum_truncate = false)`,
	}},
	{16, "Idempotency-Key: the first answer to a create, for its retries", `
CREATE TABLE idempotency_keys (
	scope TEXT NOT NULL,
	key TEXT NOT NULL,
	fingerprint TEXT NOT NULL,
	status INTEGER NOT NULL,
	answer TEXT NOT NULL,
	sealed BOOLEAN NOT NULL DEFAULT FALSE,
	created_at BIGINT NOT NULL,
	PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at)`, nil},
	{17, "how often each domain entered or left the secondaries' catalog", `
ALTER TABLE domains ADD COLUMN catalog_version BIGINT NOT NULL DEFAULT 1;
UPDATE domains SET catalog_version = 2 WHERE dnssec`, nil},
	{18, "revoked keys found for their purge", `
CREATE INDEX api_keys_revoked ON api_keys (revoked_at) WHERE revoked_at > 0`, nil},
	{19, "released hostnames found for their purge", `
CREATE INDEX hostnames_released ON hostnames (released_at) WHERE status = 'released'`, nil},
	{20, "token buckets of per-account rate limits", `
CREATE TABLE rate_buckets (
	account_id TEXT NOT NULL REFERENCES accounts (id),
	kind TEXT NOT NULL,
	tat BIGINT NOT NULL,
	PRIMARY KEY (account_id, kind)
)`, nil},
	// acme-dns's own use: a credential for any domain, not a hostname's.
	// The two newest values are kept in the row, so an update is one
	// statement; used_at finds the unused ones for their purge, txt_at
	// the ones served. Rate events are purged by age (all windows are an
	// hour at most), as registrations count them per network, not account.
	{21, "acme-dns registrations for any domain", `
CREATE TABLE acme_registrations (
	id TEXT PRIMARY KEY,
	subdomain TEXT NOT NULL UNIQUE,
	name TEXT NOT NULL,
	password_hash TEXT NOT NULL,
	allow_from TEXT NOT NULL DEFAULT '',
	source TEXT NOT NULL DEFAULT '',
	txt_new TEXT NOT NULL DEFAULT '',
	txt_old TEXT NOT NULL DEFAULT '',
	txt_at BIGINT NOT NULL DEFAULT 0,
	used_at BIGINT NOT NULL,
	created_at BIGINT NOT NULL
);
CREATE INDEX acme_registrations_used ON acme_registrations (used_at);
CREATE INDEX acme_registrations_served ON acme_registrations (txt_at) WHERE txt_at > 0;
CREATE INDEX rate_events_at ON rate_events (at)`, map[Dialect]string{
		Postgres: `ALTER TABLE acme_registrations SET (vacuum_truncate = false)`,
	}},
	// A write's last statement carries its COMMIT on PostgreSQL (storage/pgwire),
	// so the rate limits it charges there are checked in that statement:
	// this refuses the transaction for an overdrawn bucket, saying which
	// charge and by how many ms (charge.go). SQLite checks in Go.
	{22, "rate limits checked in the statement that charges them", "", map[Dialect]string{
		Postgres: `CREATE FUNCTION hostmint_overdrawn(charge INTEGER, over BIGINT) RETURNS BIGINT LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION USING ERRCODE = 'HM429', MESSAGE = 'rate limit bucket overdrawn', DETAIL = charge || ' ' || over; END $$`,
	}},
	// A batch's parts read the account without its lock (unlocked.go); its
	// last statement takes the lock and checks the cap its creates were
	// allowed under. A function, so that its read is of the row as the
	// lock leaves it, not of the statement's snapshot.
	{23, "the cap checked again under the lock by a batch's last statement", "", map[Dialect]string{
		Postgres: `CREATE FUNCTION hostmint_capped(account TEXT, adding BIGINT, cap BIGINT) RETURNS BIGINT LANGUAGE plpgsql AS $$ DECLARE held BIGINT; BEGIN SELECT active_hostnames INTO held FROM accounts WHERE id = account FOR NO KEY UPDATE; IF held + adding > cap THEN RAISE EXCEPTION USING ERRCODE = 'HM409', MESSAGE = 'active-hostname cap passed', DETAIL = account || ' ' || held || ' + ' || adding || ' > ' || cap; END IF; RETURN held; END $$`,
	}},
	// A signed DNS UPDATE is applied once: its MAC is kept while its
	// message could be taken (storage/seen_macs.go), found for its purge
	// through expires_at.
	{24, "the MACs of signed DNS UPDATE messages, to refuse replays", `
CREATE TABLE seen_macs (
	digest TEXT PRIMARY KEY,
	expires_at BIGINT NOT NULL
);
CREATE INDEX seen_macs_expires ON seen_macs (expires_at)`, map[Dialect]string{
		Postgres: `ALTER TABLE seen_macs SET (vacuum_truncate = false)`,
	}},
}, migrationsLater...)

// recountActive sets every account's active_hostnames from its rows: once
// when the counter is introduced, and after a copy (whose inserts the
// triggers have counted on top of the copied counters).
const recountActive = `UPDATE accounts SET active_hostnames = (SELECT COUNT(*) FROM hostnames
	WHERE hostnames.account_id = accounts.id AND hostnames.status IN ('live', 'pending'))`
