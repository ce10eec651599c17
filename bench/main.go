// Command bench measures Hostmint on this machine and prints one table:
// DNS queries/s of the hostname plugin against CoreDNS's own file plugin
// serving the same names from the same binary (dnsperf, 80 % names that
// exist, 20 % that do not), the same signed with the DO bit, start-up time
// and memory on SQLite and PostgreSQL, API create/update latency with
// concurrent clients on PostgreSQL, TSIG-signed DNS UPDATE with as many
// clients on PostgreSQL (beside the API) and on SQLite, and propagation
// from one node to another sharing PostgreSQL, each at every size asked
// for. Then the peers, on the same names in the same run: Knot and
// PowerDNS (on its gpgsql backend) unsigned and signed, in a second table
// of their figures and Hostmint's over theirs. Everything runs on loopback
// and everything it starts, it stops.
//
//	go run ./bench -sizes 10000,100000,1000000
//
// BENCH_EXTRA adds lines to the hostname servers' Corefiles, for looking
// inside a run: BENCH_EXTRA="pprof 127.0.0.1:6060" go run ./bench ...;
// BENCH_HOSTNAME adds lines to their hostname blocks, to measure an
// option: BENCH_HOSTNAME="response_rate_limit 100000000" go run ./bench ...
//
// With -pipeline it measures only the write pipeline (pipeline.go); with
// -signed, only what signed zones cost their secondaries (signed.go).
package main

import (
	"crypto/rand"
	"encoding/base64"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hostmint/hostmint/storage"
)

// result is every figure at one size.
type result struct {
	names                    int
	seedSQLite, seedPG       time.Duration
	hostQPS, fileQPS, signed float64
	hostCPU, fileCPU         time.Duration // server CPU per answer (dnsperf's perf.cpu)
	signedCPU                time.Duration
	// the same with fast_udp in the hostname block
	fastQPS, fastSigned    float64
	fastCPU, fastSignedCPU time.Duration
	startSQLite, startPG   time.Duration
	startFile              time.Duration
	rssSQLite, rssPG       float64 // MiB after start-up
	peakSQLite, peakPG     float64 // MiB, highest during start-up
	rssServing, rssFile    float64 // MiB after the unsigned, file runs
	rssFileStart           float64 // MiB, file plugin after start-up
	create, update, prop   latencies
	updatePG, updateSQLite updateRun // DNS UPDATE
	xfr                    xfrRun
	peers                  peers
}

func main() {
	sizes := flag.String("sizes", "10000,100000,1000000", "hostname counts to measure, comma-separated (\"\": none)")
	seconds := flag.Int("seconds", 10, "length of each dnsperf run")
	clients := flag.Int("clients", 16, "concurrent API clients")
	ops := flag.Int("ops", 4000, "hostnames created (then updated) by the API clients")
	updates := flag.Int("updates", 1000, "updates timed from node A to node B")
	pg := flag.String("pg", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "PostgreSQL server (a database on it is created and dropped per size)")
	skip := flag.String("skip", "", "parts to leave out: dns (SQLite start-up and dnsperf), pg (PostgreSQL start-up, API, propagation), update (DNS UPDATE on both stores), account (the large account), pipeline (the write pipeline's table), signed (signed zones to secondaries), sqlite or postgres (its store), million (its 1 000 000th name), peers (Knot, PowerDNS)")
	knotWorkers := flag.Int("knot-udp-workers", 2, "Knot's udp-workers")
	account := flag.Int("account", 200_000, "hostnames created through the API into one account, in bands")
	bandSize := flag.Int("band", 10_000, "creates per band of the large account")
	bin := flag.String("bin", "bin/coredns", "the built binary (go build -o bin/coredns ./coredns-build)")
	pipelineOnly := flag.Bool("pipeline", false, "measure only the write pipeline, which a full run measures last (API creates from 1 account × 16 clients, 16 × 1, 64 × 4; DNS UPDATE from 16 accounts' keys and from one) on each store, and print its table")
	pipelineOps := flag.Int("pipeline-ops", 4000, "operations per band of -pipeline")
	signedOnly := flag.Bool("signed", false, "measure only signed zones to secondaries, which a full run measures after the write pipeline (AXFR unsigned and signed, IXFR after a write, the signed AXFR at start, DNS and API rates signed against unsigned), and print its table")
	signedSizes := flag.String("signed-sizes", "100000,1000000", "hostname counts of -signed, comma-separated")
	pgProfiled := flag.Bool("pg-profile", false, "profile PostgreSQL's one-account and 16-accounts bands (pg_stat_statements, if the server loads it, and CPU by process)")
	flag.Parse()
	if abs, err := filepath.Abs(*bin); err == nil {
		*bin = abs
	}
	if *pipelineOnly {
		if err := pipeline(os.Stdout, *bin, *pg, *skip, *pipelineOps, *pgProfiled); err != nil {
			log.Fatal(err)
		}
		return
	}
	if *signedOnly {
		if err := signedPart(os.Stdout, *bin, *signedSizes); err != nil {
			log.Fatal(err)
		}
		return
	}
	if _, err := exec.LookPath("dnsperf"); err != nil {
		log.Fatal("dnsperf is not installed: run ./scripts/test-deps.sh (or apt-get install dnsperf)")
	}
	if !strings.Contains(*skip, "peers") {
		if err := checkPeers(); err != nil {
			log.Fatal(err)
		}
	}
	var rs []result
	for _, f := range strings.FieldsFunc(*sizes, func(r rune) bool { return r == ',' }) {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			log.Fatalf("-sizes: %q is not a count", f)
		}
		r, err := measure(*bin, *pg, n, *seconds, *clients, *ops, *updates, *knotWorkers, *skip)
		if err != nil {
			log.Fatalf("%d names: %v", n, err)
		}
		rs = append(rs, r)
	}
	var runs []accountRun
	if !strings.Contains(*skip, "account") {
		for _, d := range []storage.Dialect{storage.SQLite, storage.Postgres} {
			if strings.Contains(*skip, string(d)) {
				continue
			}
			dir, err := os.MkdirTemp("", "hostmint-bench")
			if err != nil {
				log.Fatal(err)
			}
			run, err := largeAccount(*bin, dir, d, *pg, *clients, *account, *bandSize, !strings.Contains(*skip, "million"))
			os.RemoveAll(dir)
			if err != nil {
				log.Fatalf("large account, %s: %v", d, err)
			}
			runs = append(runs, run)
		}
	}
	// A run of the peers alone has no figures of Hostmint's to print.
	hostmint := !strings.Contains(*skip, "dns") || !strings.Contains(*skip, "pg") || !strings.Contains(*skip, "update")
	for _, markdown := range []bool{false, true} {
		if len(rs) > 0 && hostmint {
			printTable(os.Stdout, rs, *seconds, *clients, *ops, *updates, markdown)
		}
		if len(rs) > 0 && !strings.Contains(*skip, "peers") {
			printPeersTable(os.Stdout, rs, *clients, *ops, markdown)
		}
		printAccountTable(os.Stdout, runs, *clients, markdown)
	}
	if !strings.Contains(*skip, "pipeline") {
		if err := pipeline(os.Stdout, *bin, *pg, *skip, *pipelineOps, *pgProfiled); err != nil {
			log.Fatal(err)
		}
	}
	if !strings.Contains(*skip, "signed") {
		if err := signedPart(os.Stdout, *bin, *signedSizes); err != nil {
			log.Fatal(err)
		}
	}
}

func measure(bin, pg string, n, seconds, clients, ops, updates, knotWorkers int, skip string) (r result, err error) {
	r.names = n
	dir, err := os.MkdirTemp("", "hostmint-bench")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(dir)
	if err := writeKey(dir); err != nil {
		return r, err
	}
	queries := filepath.Join(dir, "queries")
	if err := writeZone(filepath.Join(dir, "zone"), n); err != nil {
		return r, err
	}
	if err := writeQueries(queries, n); err != nil {
		return r, err
	}
	withPeers := !strings.Contains(skip, "peers")
	if !strings.Contains(skip, "dns") {
		if err := measureDNS(&r, bin, dir, queries, seconds); err != nil {
			return r, err
		}
	}
	// The file plugin is a peer too: measured when either table wants it.
	if !strings.Contains(skip, "dns") || withPeers {
		if err := measureFile(&r, bin, dir, queries, seconds); err != nil {
			return r, err
		}
	}
	dnsUpdate := !strings.Contains(skip, "update")
	if !strings.Contains(skip, "pg") {
		if err := measurePG(&r, bin, dir, pg, clients, ops, updates, dnsUpdate); err != nil {
			return r, err
		}
	}
	if dnsUpdate {
		if err := measureUpdateSQLite(&r, bin, dir, clients, ops); err != nil {
			return r, err
		}
	}
	if withPeers {
		if err := measurePeers(&r, dir, queries, pg, seconds, clients, ops, knotWorkers); err != nil {
			return r, err
		}
	}
	return r, nil
}

// writeKey writes the certificate encryption key the Corefiles name.
func writeKey(dir string) error {
	key := make([]byte, 32)
	rand.Read(key)
	return os.WriteFile(filepath.Join(dir, "cert.key"), []byte(base64.StdEncoding.EncodeToString(key)), 0o600)
}

// measureDNS: on SQLite, start-up and memory, then dnsperf against the
// hostname plugin unsigned and signed.
func measureDNS(r *result, bin, dir, queries string, seconds int) error {
	n := r.names
	db := filepath.Join(dir, "hostmint.db")
	t0 := time.Now()
	if err := seed(storage.SQLite, db, n); err != nil {
		return err
	}
	r.seedSQLite = time.Since(t0)
	log.Printf("%d names: seeded SQLite in %s", n, r.seedSQLite.Round(time.Millisecond))
	corefile := func(lines ...string) func(d, a int, dir string) string {
		return func(d, a int, dir string) string { return hostnameCorefile(d, a, dir, "sqlite", db, lines...) }
	}
	s, err := start(bin, dir, corefile())
	if err != nil {
		return err
	}
	r.startSQLite = s.started
	r.rssSQLite, r.peakSQLite = s.rss()
	run, err := dnsperf(s, queries, seconds, false)
	r.hostQPS, r.hostCPU = run.qps, run.cpu
	r.rssServing, _ = s.rss()
	s.stop()
	if err != nil {
		return err
	}
	// fast_udp, unsigned then signed (the store keeps the zone signed),
	// then the plugin as it comes, signed.
	if s, err = start(bin, dir, corefile("fast_udp")); err != nil {
		return err
	}
	if run, err = dnsperf(s, queries, seconds, false); err == nil {
		r.fastQPS, r.fastCPU = run.qps, run.cpu
		if err = s.sign(); err == nil {
			run, err = dnsperf(s, queries, seconds, true)
			r.fastSigned, r.fastSignedCPU = run.qps, run.cpu
		}
	}
	s.stop()
	if err != nil {
		return err
	}
	if s, err = start(bin, dir, corefile()); err != nil {
		return err
	}
	run, err = dnsperf(s, queries, seconds, true)
	r.signed, r.signedCPU = run.qps, run.cpu
	s.stop()
	if err != nil {
		return err
	}
	log.Printf("%d names: DNS done", n)
	return nil
}

// measureFile: CoreDNS's file plugin, same binary, on the same names.
func measureFile(r *result, bin, dir, queries string, seconds int) error {
	f, err := start(bin, dir, func(d, _ int, dir string) string { return fileCorefile(d, dir) })
	if err != nil {
		return err
	}
	r.startFile = f.started
	r.rssFileStart, _ = f.rss()
	run, err := dnsperf(f, queries, seconds, false)
	r.fileQPS, r.fileCPU = run.qps, run.cpu
	r.rssFile, _ = f.rss()
	f.stop()
	log.Printf("%d names: file plugin done", r.names)
	return err
}

// measurePG: on PostgreSQL, start-up and memory, API latency under
// concurrent clients, propagation to a second node, zone transfers from a
// third, then the API's calls as DNS UPDATE (when dnsUpdate).
func measurePG(r *result, bin, dir, pg string, clients, ops, updates int, dnsUpdate bool) error {
	n := r.names
	pgURL, drop, err := pgDatabase(pg, fmt.Sprintf("hostmint_bench_%d", n))
	if err != nil {
		return err
	}
	defer drop()
	t0 := time.Now()
	if err := seed(storage.Postgres, pgURL, n); err != nil {
		return err
	}
	r.seedPG = time.Since(t0)
	// As after a restore: statistics gathered and the bulk load written
	// out, so that what follows measures the service, not the import.
	if err := settle(pgURL); err != nil {
		return err
	}
	log.Printf("%d names: seeded PostgreSQL in %s", n, r.seedPG.Round(time.Millisecond))
	pgCorefile := func(d, a int, dir string) string { return hostnameCorefile(d, a, dir, "postgres", pgURL) }
	a, err := start(bin, dir, pgCorefile)
	if err != nil {
		return err
	}
	defer a.stop()
	r.startPG = a.started
	r.rssPG, r.peakPG = a.rss()
	if r.create, r.update, err = apiBench(a, clients, ops); err != nil {
		return err
	}
	b, err := start(bin, dir, pgCorefile)
	if err != nil {
		return err
	}
	if r.prop, err = propagation(a, b, updates); err == nil {
		log.Printf("%d names: API and propagation done", n)
		// Transfers from a third node, beside the two (as a hidden
		// primary would be): the whole zone, then IXFRs after writes.
		r.xfr, err = measureXFR(bin, dir, pgCorefile, 100)
		log.Printf("%d names: zone transfers done", n)
	}
	b.stop()
	if err != nil || !dnsUpdate {
		return err
	}
	// DNS UPDATE last, on a alone as the API was measured: the TSIG keys
	// it makes reload every node on the store, and a node started on a
	// store that holds keys reloads once just after start-up, which can
	// cost the IXFR run its first NOTIFY.
	if r.updatePG, err = updateBench(a, clients, ops); err != nil {
		return err
	}
	log.Printf("%d names: DNS UPDATE on PostgreSQL done", n)
	return nil
}
