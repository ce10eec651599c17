// Package acmedns reads the registrations of an acme-dns server's
// database (github.com/joohoi/acme-dns, SQLite or PostgreSQL), so that
// Hostmint can serve them in its place: same usernames, passwords,
// subdomains, allowfrom and newest values, so its users change nothing but
// the server their client and their acme-dns domain's delegation point at.
package acmedns

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/hostmint/hostmint/hostnames"
	"github.com/hostmint/hostmint/storage"
)

// Read opens the acme-dns database of dialect at dsn read-only and returns
// its registrations under domain (their fulldomain is <subdomain>.<domain>),
// as Hostmint rows used at now (Unix ms) unless a value was written later.
// The passwords stay acme-dns's bcrypt hashes: Hostmint checks one at its
// first update and keeps its own hash from then on.
func Read(ctx context.Context, dialect storage.Dialect, dsn, domain string, now int64) ([]storage.Registration, error) {
	driver := "postgres"
	if dialect == storage.SQLite {
		// A typo must not create an empty database and import nothing.
		if _, err := os.Stat(dsn); err != nil {
			return nil, err
		}
		driver, dsn = "sqlite", "file:"+dsn+"?mode=ro"
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	regs, err := records(ctx, db, strings.TrimSuffix(strings.ToLower(domain), "."), now)
	if err != nil {
		return nil, err
	}
	return regs, values(ctx, db, regs)
}

func records(ctx context.Context, db *sql.DB, domain string, now int64) ([]storage.Registration, error) {
	rows, err := db.QueryContext(ctx, "SELECT Username, Password, Subdomain, COALESCE(AllowFrom, '') FROM records ORDER BY Username")
	if err != nil {
		return nil, fmt.Errorf("reading acme-dns's records table (is this an acme-dns database?): %w", err)
	}
	defer rows.Close()
	var out []storage.Registration
	for rows.Next() {
		var user, sub, allow string
		var pass []byte
		if err := rows.Scan(&user, &pass, &sub, &allow); err != nil {
			return nil, err
		}
		nets, err := allowFrom(allow)
		if err != nil {
			return nil, fmt.Errorf("registration %s: %w", user, err)
		}
		r, err := hostnames.RegistrationRow(user, sub, domain, bcryptHash(pass), nets, "acme-dns", now)
		if err != nil {
			return nil, fmt.Errorf("registration %s: %w", user, err)
		}
		out = append(out, *r)
	}
	return out, rows.Err()
}

// values gives each registration its two newest values, from acme-dns's
// two rows per subdomain (LastUpdate in Unix seconds, 0 when never set).
func values(ctx context.Context, db *sql.DB, regs []storage.Registration) error {
	bySub := make(map[string]*storage.Registration, len(regs))
	for i := range regs {
		bySub[regs[i].Subdomain] = &regs[i]
	}
	rows, err := db.QueryContext(ctx, "SELECT Subdomain, Value, COALESCE(LastUpdate, 0) FROM txt WHERE Value <> '' ORDER BY LastUpdate DESC")
	if err != nil {
		return fmt.Errorf("reading acme-dns's txt table: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var sub, value string
		var at int64
		if err := rows.Scan(&sub, &value, &at); err != nil {
			return err
		}
		r := bySub[strings.ToLower(sub)]
		if r == nil || at <= 0 {
			continue
		}
		switch {
		case r.TXTNew == "":
			r.TXTNew, r.TXTAt = value, at*1000
			r.UsedAt = max(r.UsedAt, r.TXTAt)
		case r.TXTOld == "":
			r.TXTOld = value
		}
	}
	return rows.Err()
}

// allowFrom reads acme-dns's JSON list of CIDRs.
func allowFrom(s string) ([]string, error) {
	var list []string
	if strings.TrimSpace(s) != "" {
		if err := json.Unmarshal([]byte(s), &list); err != nil {
			return nil, fmt.Errorf("allowfrom %q is not a JSON list: %w", s, err)
		}
	}
	return hostnames.ParseAllowFrom(list)
}

// bcryptHash is the hash as acme-dns stored it: text, or on PostgreSQL
// maybe bytea's hex form.
func bcryptHash(b []byte) string {
	s := string(b)
	if h, ok := strings.CutPrefix(s, `\x`); ok {
		if raw, err := hex.DecodeString(h); err == nil {
			return string(raw)
		}
	}
	return s
}
