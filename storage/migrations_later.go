package storage

// migrationsLater are the versions from 25 on: signed zones to
// secondaries, the operators' look-ups and closed accounts, the audit's
// words, the bulk release's recount, and DHCID.
var migrationsLater = []migration{
	// A signed domain's denial chain for secondaries: NSEC3 (RFC 9276's
	// parameters) instead of NSEC.
	{25, "NSEC3 for a signed domain's transfers", `ALTER TABLE domains ADD COLUMN nsec3 BOOLEAN NOT NULL DEFAULT FALSE`, nil},
	// A key rollover: the key it brings in (sealed as the key is), and
	// its stage and when it reached it (domains/rollover.go).
	{26, "a signed domain's key rollover", `ALTER TABLE domains ADD COLUMN next_dnskey TEXT NOT NULL DEFAULT '';
ALTER TABLE domains ADD COLUMN next_dnssec_key TEXT NOT NULL DEFAULT '';
ALTER TABLE domains ADD COLUMN rollover TEXT NOT NULL DEFAULT '';
ALTER TABLE domains ADD COLUMN rollover_at BIGINT NOT NULL DEFAULT 0`, nil},
	// An account closed for good (DELETE /api/admin/accounts/{id}), and
	// what the operators' look-ups page through: accounts newest first (by
	// name, by status), hostnames by name and by address. A hostname's
	// first address is ip; a second (dual stack) is what follows it in
	// addrs, indexed as that expression; more than two (a target's) are
	// rare and found through a partial index of their own.
	{27, "closed accounts, and the operators' look-ups", `ALTER TABLE accounts ADD COLUMN closed_at BIGINT NOT NULL DEFAULT 0;
CREATE INDEX accounts_created ON accounts (created_at, id);
CREATE INDEX accounts_name ON accounts (name, created_at);
CREATE INDEX accounts_closed ON accounts (created_at, id) WHERE closed_at > 0;
CREATE INDEX accounts_suspended ON accounts (created_at, id) WHERE suspended_at > 0;
CREATE INDEX hostnames_name ON hostnames (name);
CREATE INDEX hostnames_ip ON hostnames (ip);
CREATE INDEX hostnames_second_addr ON hostnames (substr(addrs, length(ip) + 2));
CREATE INDEX hostnames_addrs ON hostnames (addrs) WHERE addrs LIKE '%,%,%'`, nil},
	// A refusal's words beside its code: what the API's error or the
	// UPDATE's EDE said, so that the audit log tells an operator why.
	{28, "the words of a refusal in the audit log", `ALTER TABLE audit_log ADD COLUMN detail TEXT NOT NULL DEFAULT ''`, nil},
	// PostgreSQL keeps every version of a row a transaction updates, so the
	// row trigger's update of an account's counter for each of thousands of
	// hostnames released at once (an account closed) costs more with each
	// one. A bulk release turns the trigger off for its transaction
	// (hostmint.recount) and recounts the account once (queries_close.go).
	{29, "the hostname counter recounted once after a bulk release", "", map[Dialect]string{
		Postgres: `DROP TRIGGER hostnames_active_update ON hostnames;
CREATE TRIGGER hostnames_active_update AFTER UPDATE OF status, account_id ON hostnames FOR EACH ROW WHEN (((OLD.status IN ('live', 'pending')) IS DISTINCT FROM (NEW.status IN ('live', 'pending')) OR OLD.account_id IS DISTINCT FROM NEW.account_id) AND current_setting('hostmint.recount', true) IS DISTINCT FROM 'on') EXECUTE FUNCTION hostnames_active()`,
	}},
	// A DHCP server's DHCID RRset at a hostname (RFC 4701, 4703): opaque,
	// written only by DNS UPDATE, served beside the address.
	{30, "the DHCID of a hostname a DHCP server keeps", `ALTER TABLE hostnames ADD COLUMN dhcid TEXT NOT NULL DEFAULT ''`, nil},
}
