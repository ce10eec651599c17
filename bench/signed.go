package main

import (
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/miekg/dns"
)

// What a signed zone costs its secondaries (-signed): the same pool
// domain on SQLite transferred unsigned, then signed through the admin
// API, to a fake secondary that takes AXFRs and, after writes, IXFRs.

// signedUpdates is how many writes the IXFR delay is timed over, and
// signedCreates how many creates (from signedClients callers) each rate of
// writes is read from.
const (
	signedUpdates = 20
	signedCreates = 1000
	signedClients = 16
	signedSeconds = 5 // of each dnsperf run
)

// take is one complete AXFR as the secondary received it.
type take struct {
	d                   time.Duration
	records, sigs, sets int // sets: runs of one owner and type, RRSIGs aside
	keys                []*dns.DNSKEY
	cpu, ownCPU         time.Duration // the server's during it, and the secondary's (this process)
	tries               int           // AXFRs asked for until this one (unsigned or refused ones before)
}

// signedRun is every figure at one size.
type signedRun struct {
	names                  int
	rssStart, rssUnsigned  float64 // MiB after start-up, after the unsigned AXFR
	unsigned               take
	first, second          take // signed; first timed from the PATCH's 200
	rssSigned, peakFirst   float64
	ixfr, ixfrAlone        latencies // API 200 to IXFR held; the IXFR that held it alone
	ixfrRetries, ixfrWhole int       // IXFRs asked again after a NOTIFY; IXFRs answered by the whole zone
	badSigs                int       // RRSIGs in an IXFR that did not verify
	startAnswer, atStart   time.Duration
	restart                take
	rssRestart             float64
	qps, qpsSigned         perf
	creates, createsSigned band
}

// signedPart measures each size of sizes and prints the table.
func signedPart(w io.Writer, bin, sizes string) error {
	if _, err := exec.LookPath("dnsperf"); err != nil {
		return fmt.Errorf("dnsperf is not installed: run ./scripts/test-deps.sh (or apt-get install dnsperf)")
	}
	var runs []signedRun
	for _, f := range strings.FieldsFunc(sizes, func(r rune) bool { return r == ',' }) {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("-signed-sizes: %q is not a count", f)
		}
		dir, err := os.MkdirTemp("", "hostmint-bench")
		if err != nil {
			return err
		}
		r, err := measureSigned(bin, dir, n)
		os.RemoveAll(dir)
		if err != nil {
			return fmt.Errorf("signed, %d names: %w", n, err)
		}
		runs = append(runs, r)
	}
	for _, markdown := range []bool{false, true} {
		printSigned(w, runs, markdown)
	}
	return nil
}

func measureSigned(bin, dir string, n int) (r signedRun, err error) {
	r.names = n
	db := filepath.Join(dir, "hostmint.db")
	queries := filepath.Join(dir, "existing")
	if err := writeKey(dir); err != nil {
		return r, err
	}
	if err := writeExisting(queries, n); err != nil {
		return r, err
	}
	t0 := time.Now()
	if err := seed(storage.SQLite, db, n); err != nil {
		return r, err
	}
	log.Printf("signed, %d names: seeded SQLite in %s", n, time.Since(t0).Round(time.Millisecond))
	port, notified, closeSecondary, err := fakeSecondary()
	if err != nil {
		return r, err
	}
	defer closeSecondary()
	corefile := transferCorefile(func(d, a int, dir string) string { return hostnameCorefile(d, a, dir, "sqlite", db) }, port)
	s, err := start(bin, dir, corefile)
	if err != nil {
		return r, err
	}
	defer func() { s.stop() }() // the restarted server, by the end
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(s.dns))
	r.rssStart, _ = s.rss()
	if r.unsigned, err = axfrUntil(s, time.Now(), false); err != nil {
		return r, err
	}
	r.rssUnsigned, _ = s.rss()
	log.Printf("signed, %d names: unsigned AXFR %d records in %s", n, r.unsigned.records, r.unsigned.d.Round(time.Millisecond))

	tok, err := s.adminToken()
	if err != nil {
		return r, err
	}
	admin := newClient(s, tok)
	_, c, err := newAccountID(s, admin, "bench-signed")
	if err != nil {
		return r, err
	}
	if r.qps, err = dnsperf(s, queries, signedSeconds, true); err != nil {
		return r, err
	}
	r.creates, _ = createBand(c, signedClients, 0, signedCreates)
	log.Printf("signed, %d names: unsigned %.0f q/s, %.0f creates/s", n, r.qps.qps, r.creates.create.perSecond)

	if err := signDomain(admin); err != nil {
		return r, err
	}
	// A secondary asks for the zone once it is told; timed from the 200.
	signedAt := time.Now()
	peak := peakRSS(s)
	r.first, err = axfrUntil(s, signedAt, true)
	r.peakFirst = peak()
	if err != nil {
		return r, err
	}
	if r.second, err = axfrUntil(s, time.Now(), true); err != nil {
		return r, err
	}
	r.rssSigned, _ = s.rss()
	log.Printf("signed, %d names: first signed AXFR %d records %s after the 200, second %s", n, r.first.records,
		r.first.d.Round(time.Millisecond), r.second.d.Round(time.Millisecond))

	if err := ixfrDelays(&r, c, addr, notified); err != nil {
		return r, err
	}
	log.Printf("signed, %d names: IXFR after a write p50 %s p99 %s", n, r.ixfr.p50, r.ixfr.p99)
	if r.qpsSigned, err = dnsperf(s, queries, signedSeconds, true); err != nil {
		return r, err
	}
	r.createsSigned, _ = createBand(c, signedClients, signedCreates, signedCreates)
	log.Printf("signed, %d names: signed %.0f q/s, %.0f creates/s", n, r.qpsSigned.qps, r.createsSigned.create.perSecond)

	// At start the order is built and every signature made again: the
	// cache lives in the process.
	s.stop()
	t0 = time.Now()
	again, err := start(bin, dir, corefile)
	if err != nil {
		return r, err // the deferred stop stops the old one again, harmlessly
	}
	s = again
	r.startAnswer = s.started
	if r.restart, err = axfrUntil(s, t0, true); err != nil {
		return r, err
	}
	r.atStart = r.restart.d
	r.rssRestart, _ = s.rss()
	log.Printf("signed, %d names: restarted, answering in %s, signed AXFR received %s after start", n,
		r.startAnswer.Round(time.Millisecond), r.atStart.Round(time.Millisecond))
	return r, nil
}

// writeExisting: queries for names that exist only, spread over all, so
// that every signed answer holds a signature.
func writeExisting(path string, n int) error {
	var b strings.Builder
	for i := range 100_000 {
		fmt.Fprintf(&b, "h%07d.%s A\n", (i*7919)%n, zone)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// signDomain turns DNSSEC on for the bench zone, found by name.
func signDomain(admin *apiClient) error {
	var list struct {
		Domains []struct{ ID, Name string }
	}
	if err := admin.call("GET", "/api/admin/domains", nil, 200, &list); err != nil {
		return err
	}
	for _, d := range list.Domains {
		if d.Name == zone {
			return admin.call("PATCH", "/api/admin/domains/"+d.ID, map[string]bool{"dnssec": true}, 200, nil)
		}
	}
	return fmt.Errorf("no domain %s in the admin API's list", zone)
}
