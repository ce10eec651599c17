package main

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// pdnsSchema is the gpgsql schema Debian's pdns-backend-pgsql ships.
func pdnsSchema() (string, error) {
	for _, p := range []string{
		"/usr/share/pdns-backend-pgsql/schema/schema.pgsql.sql",
		"/usr/share/doc/pdns-backend-pgsql/schema.pgsql.sql",
	} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("the PowerDNS PostgreSQL schema is missing (Debian package pdns-backend-pgsql): run ./scripts/test-deps.sh, or leave the peers out with -skip peers")
}

// pdnsConf: the gpgsql backend on the bench's PostgreSQL, DNS and the
// HTTP API on loopback; caches and threads at their defaults, as PowerDNS
// ships.
func pdnsConf(dir, pg, db, key string, port, apiPort int) (string, error) {
	u, err := url.Parse(pg)
	if err != nil {
		return "", err
	}
	pass, _ := u.User.Password()
	return fmt.Sprintf(`launch=gpgsql
gpgsql-host=%s
gpgsql-port=%s
gpgsql-user=%s
gpgsql-password=%s
gpgsql-dbname=%s
gpgsql-dnssec=yes
local-address=127.0.0.1
local-port=%d
api=yes
api-key=%s
webserver-address=127.0.0.1
webserver-port=%d
webserver-allow-from=127.0.0.0/8
socket-dir=%s
daemon=no
guardian=no
write-pid=no
disable-syslog=yes
loglevel=3
default-ksk-algorithm=ecdsa256
default-zsk-algorithm=
`, u.Hostname(), u.Port(), u.User.Username(), pass, db, port, key, apiPort, dir), nil
}

// measurePDNS loads the names into a database of PowerDNS's own, runs
// pdns_server on it unsigned (start-up, memory, dnsperf, then writes
// through its API), secures the zone with pdnsutil and runs it again
// signed. The database is dropped whatever happens.
func measurePDNS(dir, queries, pg string, n, seconds, clients, ops int) (p peer, err error) {
	pd, err := os.MkdirTemp(dir, "pdns-")
	if err != nil {
		return p, err
	}
	defer os.RemoveAll(pd)
	name := fmt.Sprintf("pdns_bench_%d", n)
	dsn, drop, err := pgDatabase(pg, name)
	if err != nil {
		return p, err
	}
	defer drop()
	t0 := time.Now()
	if err := pdnsLoad(dsn, n); err != nil {
		return p, err
	}
	p.load = time.Since(t0)
	// As for Hostmint's store: statistics gathered and the load written out.
	if err := settle(dsn); err != nil {
		return p, err
	}
	key := make([]byte, 16)
	rand.Read(key)
	apiKey := hex.EncodeToString(key)
	port, apiPort := freePort(), freePort()
	conf, err := pdnsConf(pd, pg, name, apiKey, port, apiPort)
	if err != nil {
		return p, err
	}
	if err := os.WriteFile(filepath.Join(pd, "pdns.conf"), []byte(conf), 0o600); err != nil {
		return p, err
	}
	start := func(signed bool) (*server, error) {
		s, err := startPeer(exec.Command("pdns_server", "--config-dir="+pd), pd, port, signed)
		if err == nil {
			s.api = apiPort
		}
		return s, err
	}

	s, err := start(false)
	if err != nil {
		return p, err
	}
	p.start = s.started
	p.rss, _ = s.rss()
	var run perf
	if run, err = dnsperf(s, queries, seconds, false); err == nil {
		p.qps, p.cpu = run.qps, run.cpu
		p.create, p.update, err = pdnsAPIBench(s, apiKey, clients, ops)
	}
	s.stop()
	if err != nil {
		return p, err
	}

	// pdns_server caches the zone's keys (and answers) for a while: a
	// restart is the way to have every answer signed at once.
	out, err := exec.Command("pdnsutil", "--config-dir="+pd, "secure-zone", zone).CombinedOutput()
	if err != nil {
		return p, fmt.Errorf("pdnsutil secure-zone: %v\n%s", err, out)
	}
	if err := pdnsOrder(dsn); err != nil {
		return p, err
	}
	if s, err = start(true); err != nil {
		return p, err
	}
	defer s.stop()
	p.startSigned = s.started
	p.rssSigned, _ = s.rss()
	if err := signedDenial(s.dns); err != nil {
		return p, err
	}
	run, err = dnsperf(s, queries, seconds, true)
	p.signed, p.signedCPU = run.qps, run.cpu
	return p, err
}

// pdnsLoad creates the schema and COPYs the zone in: the SOA, NS and
// glue, and n A records, as rectified for an unsigned zone (auth, no
// ordername). API-RECTIFY is off for the zone: on (the default), every
// PATCH reads the whole zone back through the backend, half a second a
// PATCH at 50 000 names on this machine, so hours of PATCHes at a
// million; a zone of single labels needs no rectifying until it is signed.
func pdnsLoad(dsn string, n int) error {
	schema, err := pdnsSchema()
	if err != nil {
		return err
	}
	ddl, err := os.ReadFile(schema)
	if err != nil {
		return err
	}
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.Exec(string(ddl)); err != nil {
		return fmt.Errorf("%s: %w", schema, err)
	}
	var id int
	if err := db.QueryRow("INSERT INTO domains (name, type) VALUES ($1, 'NATIVE') RETURNING id", zone).Scan(&id); err != nil {
		return err
	}
	if _, err := db.Exec("INSERT INTO domainmetadata (domain_id, kind, content) VALUES ($1, 'API-RECTIFY', '0')", id); err != nil {
		return err
	}
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	st, err := tx.Prepare("COPY records (domain_id, name, type, content, ttl, auth) FROM STDIN")
	if err != nil {
		return err
	}
	rows := [][]any{
		{id, zone, "SOA", fmt.Sprintf("ns1.%s hostmaster.%s 1 3600 600 1209600 60", zone, zone), 3600, true},
		{id, zone, "NS", "ns1." + zone, 3600, true},
		{id, "ns1." + zone, "A", "127.0.0.1", 3600, true},
	}
	for _, r := range rows {
		if _, err := st.Exec(r...); err != nil {
			return err
		}
	}
	for i := range n {
		label := fmt.Sprintf("h%07d", i)
		if _, err := st.Exec(id, label+"."+zone, "A", addr(i), 60, true); err != nil {
			return err
		}
	}
	if _, err := st.Exec(); err != nil {
		return err
	}
	if err := st.Close(); err != nil {
		return err
	}
	return tx.Commit()
}

// pdnsOrder writes the NSEC ordername of every record in one statement:
// in a zone of single labels under the apex, the label itself (the apex's
// is empty). It is what pdnsutil rectify-zone would write, with an UPDATE
// a record (it took 223 s for 50 000 here, the machine busy).
func pdnsOrder(dsn string) error {
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.Exec(`UPDATE records SET ordername = CASE WHEN name = $1 THEN '' ELSE split_part(name, '.', 1) END`, zone)
	if err == nil {
		err = settle(dsn)
	}
	return err
}
