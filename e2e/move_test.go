package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
	"github.com/miekg/dns"
)

var (
	cliOnce sync.Once
	cliPath string
	cliErr  error
)

// cli builds cmd/hostmint once, beside the server binary.
func cli(t testing.TB) string {
	t.Helper()
	binary(t) // makes binDir, removed with it
	cliOnce.Do(func() {
		cliPath = filepath.Join(binDir, "hostmint")
		cmd := exec.Command("go", "build", "-o", cliPath, "./cmd/hostmint")
		cmd.Dir = ".."
		if out, err := cmd.CombinedOutput(); err != nil {
			cliErr = &buildError{err: err, out: out}
		}
	})
	if cliErr != nil {
		t.Fatal(cliErr)
	}
	return cliPath
}

// hostmint runs the CLI and returns its exit code and output.
func hostmint(t testing.TB, args ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command(cli(t), args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, out.String()
}

// storeArg is the CLI's spelling of a store.
func storeArg(d storage.Dialect, dsn string) string {
	if d == storage.SQLite {
		return "sqlite:" + dsn
	}
	return dsn
}

// moveFixture is what a store holds after fillForMove: every kind of row a
// move must carry, with the answers DNS must keep giving.
type moveFixture struct {
	key     string            // a team key
	ids     map[string]string // hostname → id
	hosts   map[string]string // hostname → address
	txt     string            // owner of a published TXT record
	cred    acmeCred          // a DNS-01 credential (stored as a hash)
	chal    string            // the challenge value it published
	chalFor string            // the hostname of that challenge
	dnskey  string            // the signed domain's DNSKEY (sealed key in the store)
}

const moveDomain = "moved.example.net"

// fillForMove writes through the API: a team with a signed domain, three
// hostnames, a TXT record, a DNS-01 credential and a published challenge.
func fillForMove(t *testing.T, s *server) moveFixture {
	t.Helper()
	_, key := s.team(t, moveDomain)
	s.must(200, "PATCH", "/api/admin/domains/"+s.domainID(t, moveDomain), s.admin, map[string]any{"dnssec": true})
	f := moveFixture{key: key, ids: map[string]string{}, hosts: map[string]string{}}
	for i, ip := range []string{"192.0.2.10", "192.0.2.11", "192.0.2.12"} {
		id, name := s.recHost(t, key, "host"+string(rune('a'+i)), ip)
		f.ids[name], f.hosts[name] = id, ip
	}
	for name, id := range f.ids {
		s.must(201, "POST", recPath(id), key, recObj{"type": "TXT", "name": "note", "text": "moved"})
		f.txt = "note." + name
		f.cred = s.acmeCredential(t, key, id)
		f.chal, f.chalFor = acmeValue(), name
		s.acmeUpdate(t, f.cred, f.chal)
		break
	}
	m := s.query(moveDomain, dns.TypeDNSKEY, "udp")
	if len(m.Answer) != 1 {
		t.Fatalf("DNSKEY before the move: %v", m)
	}
	f.dnskey = m.Answer[0].String()
	return f
}

// txts is the TXT data of name's answer.
func txts(s *server, name string) string {
	var out []string
	for _, rr := range s.query(name, dns.TypeTXT, "udp").Answer {
		if v, ok := rr.(*dns.TXT); ok {
			out = append(out, strings.Join(v.Txt, ""))
		}
	}
	return strings.Join(out, ",")
}

// checkMoved asserts that s, started on a copy of the store f was written
// to, answers as the original did and takes writes.
func checkMoved(t *testing.T, s *server, f moveFixture) {
	t.Helper()
	for name, ip := range f.hosts {
		s.resolves(name, dns.TypeA, ip)
	}
	eventually(t, 3e9, func() bool { return txts(s, f.txt) == "moved" }, "TXT record %s not served", f.txt)
	eventually(t, 3e9, func() bool { return txts(s, "_acme-challenge."+f.chalFor) == f.chal },
		"challenge for %s not served", f.chalFor)
	m := s.query(moveDomain, dns.TypeDNSKEY, "udp")
	if len(m.Answer) != 1 || m.Answer[0].String() != f.dnskey {
		t.Errorf("DNSKEY after the move %v, want %s", m.Answer, f.dnskey)
	}
	// Hashes were copied as they are: the old key and credential still work.
	for _, id := range f.ids {
		s.must(200, "GET", "/api/v1/hostnames/"+id, f.key, nil)
	}
	next := acmeValue()
	s.acmeUpdate(t, f.cred, next)
	// New writes continue the change sequence and are served.
	for name, id := range f.ids {
		s.must(200, "PUT", "/api/v1/hostnames/"+id, f.key, map[string]any{"ip": "192.0.2.99"})
		s.resolves(name, dns.TypeA, "192.0.2.99")
		break
	}
	_, name := s.recHost(t, f.key, "after", "192.0.2.50")
	s.resolves(name, dns.TypeA, "192.0.2.50")
}

// maxChange is the highest change id in a store.
func maxChange(t *testing.T, d storage.Dialect, dsn string) int64 {
	t.Helper()
	var n int64
	if err := openSQL(t, d, dsn).QueryRow("SELECT COALESCE(MAX(id), 0) FROM changes").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A store written through the API moves with `hostmint migrate`, both ways,
// into an empty database; the server on the copy answers every name, takes
// the old secrets and new writes; a second migrate into it is refused.
func TestMigrateCLI(t *testing.T) {
	for _, tc := range []struct{ from, to storage.Dialect }{
		{storage.SQLite, storage.Postgres},
		{storage.Postgres, storage.SQLite},
	} {
		t.Run(string(tc.from)+"-to-"+string(tc.to), func(t *testing.T) {
			t.Parallel()
			keyLine := recKeyLine(t) // the seal key moves with the operator, not the store
			dir := t.TempDir()
			s := start(t, options{profile: 2, dialect: tc.from, dir: dir, extra: []string{keyLine}})
			f := fillForMove(t, s)
			s.stop()
			before := maxChange(t, tc.from, s.dsn)

			dsn := storagetest.DSN(t, tc.to)
			code, out := hostmint(t, "migrate", "-from", storeArg(tc.from, s.dsn), "-to", storeArg(tc.to, dsn))
			if code != 0 {
				t.Fatalf("migrate: exit %d\n%s", code, out)
			}
			for _, table := range storage.Tables() {
				if !strings.Contains(out, table) {
					t.Errorf("migrate output does not count %s:\n%s", table, out)
				}
			}
			if after := maxChange(t, tc.to, dsn); after != before {
				t.Fatalf("copied change sequence ends at %d, source at %d", after, before)
			}

			moved := start(t, options{profile: 2, dialect: tc.to, dsn: dsn, dir: dir, extra: []string{keyLine}})
			checkMoved(t, moved, f)
			moved.stop()
			if after := maxChange(t, tc.to, dsn); after <= before {
				t.Fatalf("changes after the move end at %d, not past %d", after, before)
			}

			code, out = hostmint(t, "migrate", "-from", storeArg(tc.from, s.dsn), "-to", storeArg(tc.to, dsn))
			if code != 2 || !strings.Contains(out, "not empty") {
				t.Fatalf("migrate into a full store: exit %d, want 2 and \"not empty\":\n%s", code, out)
			}
		})
	}
}

// pgTool finds a PostgreSQL client program on PATH or in Debian's place.
func pgTool(t *testing.T, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name)
	if len(matches) == 0 {
		t.Fatalf("%s is not installed: run ./scripts/test-deps.sh", name)
	}
	return matches[len(matches)-1]
}

// The README's backup procedures bring a service back with every name
// answering: `hostmint backup` of a running SQLite store restored as a new
// data directory, and pg_dump restored with pg_restore into a new database.
func TestBackupRestore(t *testing.T) {
	for _, tc := range []struct {
		dialect storage.Dialect
		backup  func(t *testing.T, s *server) (dsn string)
	}{
		{storage.SQLite, func(t *testing.T, s *server) string {
			file := filepath.Join(t.TempDir(), "hostmint.db")
			// The server keeps running: this is the online backup.
			if code, out := hostmint(t, "backup", "-from", "sqlite:"+s.dsn, "-to", file); code != 0 {
				t.Fatalf("backup: exit %d\n%s", code, out)
			}
			return file
		}},
		{storage.Postgres, func(t *testing.T, s *server) string {
			dump := filepath.Join(t.TempDir(), "hostmint.dump")
			if out, err := exec.Command(pgTool(t, "pg_dump"), "-Fc", "-f", dump, "-d", s.dsn).CombinedOutput(); err != nil {
				t.Fatalf("pg_dump: %v\n%s", err, out)
			}
			dsn := storagetest.DSN(t, storage.Postgres)
			if out, err := exec.Command(pgTool(t, "pg_restore"), "--no-owner", "--exit-on-error", "-d", dsn, dump).CombinedOutput(); err != nil {
				t.Fatalf("pg_restore: %v\n%s", err, out)
			}
			return dsn
		}},
	} {
		t.Run(string(tc.dialect), func(t *testing.T) {
			t.Parallel()
			keyLine := recKeyLine(t)
			s := start(t, options{profile: 2, dialect: tc.dialect, extra: []string{keyLine}})
			f := fillForMove(t, s)
			dsn := tc.backup(t, s)
			s.stop()
			// A new data directory: the restored store and the seal key are all it needs.
			dir := t.TempDir()
			if tc.dialect == storage.SQLite {
				moved := filepath.Join(dir, "hostmint.db")
				if err := os.Rename(dsn, moved); err != nil {
					t.Fatal(err)
				}
				dsn = moved
			}
			restored := start(t, options{profile: 2, dialect: tc.dialect, dsn: dsn, dir: dir, extra: []string{keyLine}})
			// Its admin token is new; the store's keys and hashes are the old ones.
			checkMoved(t, restored, f)
		})
	}
}
