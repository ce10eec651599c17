package main

import (
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/hostmint/hostmint/storage"
)

// pipelineClients is the callers of every band: the one account's band
// needs as many as the spread ones for the rates to compare.
const pipelineClients = 16

// pipelineRun is the write pipeline's figures on one store, all from one
// server, so that the bands differ only in how the writes spread.
type pipelineRun struct {
	dialect                 storage.Dialect
	one, spread16, spread64 band // API creates: 1 × 16, 16 × 1, 64 × 4
	dnsMints, dnsRepoints   band // DNS UPDATE, a key per account
	oneMints, oneRepoints   band // DNS UPDATE, one key of one account
	ops                     int
	profiles                map[string]*pgProfile // PostgreSQL's bands, by name (-pg-profile)
}

// pipeline measures the write pipeline on each store not skipped and
// prints the table: whether writes of many accounts batch together as
// well as one busy account's do.
func pipeline(w io.Writer, bin, pg, skip string, ops int, profiled bool) error {
	if ops < pipelineClients {
		return fmt.Errorf("-pipeline-ops: %d is fewer than the %d clients", ops, pipelineClients)
	}
	var runs []pipelineRun
	for _, d := range []storage.Dialect{storage.SQLite, storage.Postgres} {
		if strings.Contains(skip, string(d)) {
			continue
		}
		dir, err := os.MkdirTemp("", "hostmint-bench")
		if err != nil {
			return err
		}
		run, err := pipelineStore(bin, dir, d, pg, ops, profiled && d == storage.Postgres)
		os.RemoveAll(dir)
		if err != nil {
			return fmt.Errorf("pipeline, %s: %w", d, err)
		}
		runs = append(runs, run)
	}
	printPipeline(w, runs)
	return nil
}

// pipelineStore runs every band on one server on a fresh store of d.
func pipelineStore(bin, dir string, d storage.Dialect, pg string, ops int, profiled bool) (pipelineRun, error) {
	run := pipelineRun{dialect: d, ops: ops, profiles: map[string]*pgProfile{}}
	// profile runs band as it is, profiled when asked.
	profile := func(name string, band func() error) error {
		if !profiled {
			return band()
		}
		end, err := startPGProfile(pg)
		if err != nil {
			return err
		}
		if err := band(); err != nil {
			return err
		}
		run.profiles[name], err = end(ops)
		return err
	}
	dsn, drop, err := freshStore(dir, d, pg, "pipeline")
	if err != nil {
		return run, err
	}
	defer drop()
	s, err := start(bin, dir, func(dp, ap int, dir string) string { return hostnameCorefile(dp, ap, dir, string(d), dsn) })
	if err != nil {
		return run, err
	}
	defer s.stop()
	tok, err := s.adminToken()
	if err != nil {
		return run, err
	}
	admin := newClient(s, tok)
	acc, c, err := newAccountID(s, admin, "bench-pipeline-one")
	if err != nil {
		return run, err
	}
	// Each band its own addresses, so that none of its creates meets an
	// earlier band's name.
	if err := profile("1 account × 16 clients", func() error {
		run.one, _ = createBand(c, pipelineClients, 0, ops)
		return nil
	}); err != nil {
		return run, err
	}
	logBand(d, "1 account × 16 clients", run.one)
	if err := profile("16 accounts × 1 client", func() (err error) {
		run.spread16, err = accountsBand(s, admin, 16, 1, ops, ops)
		return err
	}); err != nil {
		return run, err
	}
	logBand(d, "16 accounts × 1 client", run.spread16)
	if run.spread64, err = accountsBand(s, admin, 64, 4, 2*ops, ops); err != nil {
		return run, err
	}
	logBand(d, "64 accounts × 4 clients", run.spread64)
	// The keys of the 16 accounts first, then the one account's: each key
	// reloads the server, which may close connections made before it, and
	// both take theirs only once their keys are made.
	up, err := updateBench(s, pipelineClients, ops)
	if err != nil {
		return run, err
	}
	per := ops / pipelineClients * pipelineClients
	run.dnsMints = band{create: up.create, to: per}
	run.dnsRepoints = band{create: up.repoint, to: per}
	logBand(d, "DNS UPDATE mints, 16 keys of 16 accounts", run.dnsMints)
	if run.oneMints, run.oneRepoints, err = accountDNSUpdates(s, admin, acc, pipelineClients, ops); err != nil {
		return run, err
	}
	logBand(d, "DNS UPDATE mints, one key of one account", run.oneMints)
	return run, nil
}

// accountsBand creates n hostnames into accounts new accounts from per
// callers each, caller k always into account k/per, as that many services
// would each with their own key. Each account's callers connect from a
// loopback address of their own, as services on their own hosts would:
// from one address, 256 callers would meet the API's limit of
// connections per address, and the refusals would be the bench's.
func accountsBand(s *server, admin *apiClient, accounts, per, from, n int) (band, error) {
	cs := make([]*apiClient, accounts)
	for a := range cs {
		var err error
		if _, cs[a], err = newAccountID(s, admin, fmt.Sprintf("bench-pipeline-%dx%d-%d", accounts, per, a)); err != nil {
			return band{}, err
		}
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 1, byte(a+1))}}
		cs[a].http.Transport.(*http.Transport).DialContext = d.DialContext
	}
	b := timeCallers(accounts*per, n, func(k, i int) bool {
		return cs[k/per].call("POST", "/api/v1/hostnames", map[string]string{"ip": largeAddr(from + i)}, 201, nil) == nil
	})
	for _, c := range cs {
		c.http.CloseIdleConnections()
	}
	b.from, b.to = from, from+n
	return b, nil
}

func logBand(d storage.Dialect, name string, b band) {
	log.Printf("pipeline, %s: %s: %.0f/s, p99 %s, CPU %s a call, %d refused", d, name, b.create.perSecond, b.create.p99, b.create.cpu, b.refused)
}

// printPipeline writes the Markdown table, a row per band and store, then
// each store's rates of many accounts against one account's.
func printPipeline(w io.Writer, runs []pipelineRun) {
	if len(runs) == 0 {
		return
	}
	ms := func(v float64) string { return fmt.Sprintf("%.2f ms", v) }
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| store | band | ops | rate | p50 | p99 | CPU a call | refused |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, r := range runs {
		for _, row := range []struct {
			name string
			b    band
		}{
			{"API: 1 account × 16 clients", r.one},
			{"API: 16 accounts × 1 client", r.spread16},
			{"API: 64 accounts × 4 clients", r.spread64},
			{"DNS UPDATE mints: 16 keys of 16 accounts", r.dnsMints},
			{"DNS UPDATE repoints: 16 keys of 16 accounts", r.dnsRepoints},
			{"DNS UPDATE mints: 16 connections, one key of one account", r.oneMints},
			{"DNS UPDATE repoints: 16 connections, one key of one account", r.oneRepoints},
		} {
			l := row.b.create
			fmt.Fprintf(w, "| %s | %s | %d | %.0f/s | %s | %s | %s | %d |\n", r.dialect, row.name, row.b.to-row.b.from,
				l.perSecond, ms(float64(l.p50.Microseconds())/1000), ms(float64(l.p99.Microseconds())/1000),
				ms(float64(l.cpu.Microseconds())/1000), row.b.refused)
		}
	}
	fmt.Fprintln(w)
	for _, r := range runs {
		one := r.one.create.perSecond
		fmt.Fprintf(w, "%s: 16 accounts / one account %.2f, 64×4 / one account %.2f\n", r.dialect,
			r.spread16.create.perSecond/one, r.spread64.create.perSecond/one)
		fmt.Fprintf(w, "%s: DNS UPDATE 16 accounts / one account %.2f (mints), %.2f (repoints)\n", r.dialect,
			r.dnsMints.create.perSecond/r.oneMints.create.perSecond, r.dnsRepoints.create.perSecond/r.oneRepoints.create.perSecond)
	}
	fmt.Fprintf(w, "\n%d operations a band, one server per store, profile 1\n", runs[0].ops)
	for _, r := range runs {
		for _, name := range []string{"1 account × 16 clients", "16 accounts × 1 client"} {
			if p := r.profiles[name]; p != nil {
				p.print(w, fmt.Sprintf("%s, %s", r.dialect, name))
			}
		}
	}
}
