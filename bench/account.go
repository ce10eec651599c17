package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hostmint/hostmint/storage"
)

// band is one stretch of creates into the large account.
type band struct {
	from, to int // the account's hostnames before and after
	create   latencies
	refused  int // answers other than 201
}

// accountRun is the large-account figures of one store.
type accountRun struct {
	dialect storage.Dialect
	bands   []band
	updates band // a band of updates (PUT a new address) across the account's names
	// DNS UPDATE into the same account: mints, then repoints of them
	// (clients connections, one TSIG key).
	dnsMints, dnsRepoints band
	million               band // the creates that pass the 1 000 000th name
	// The same number of creates spread over clients accounts, in the same
	// run: what the machine does at that moment without the one account's
	// row, against which the account's own rate is read (this machine's
	// speed varies by a third within the hour).
	spread band
}

// largeAccount creates hostnames into one business account (cap raised out
// of the way) with clients callers at once, in bands of bandSize up to
// total, and reports each band's rate, latency and refusals. Then it
// bulk-loads the account to just short of a million names, restarts the
// server, and times one more band across the millionth.
func largeAccount(bin, dir string, d storage.Dialect, pg string, clients, total, bandSize int, million bool) (accountRun, error) {
	run := accountRun{dialect: d}
	dsn, drop, err := freshStore(dir, d, pg, "account")
	if err != nil {
		return run, err
	}
	defer drop()
	corefile := func(dp, ap int, dir string) string { return hostnameCorefile(dp, ap, dir, string(d), dsn) }
	s, err := start(bin, dir, corefile)
	if err != nil {
		return run, err
	}
	tok, err := s.adminToken()
	if err != nil {
		s.stop()
		return run, err
	}
	acc, c, err := newAccountID(s, newClient(s, tok), "bench-large")
	if err != nil {
		s.stop()
		return run, err
	}
	var ids []string
	for from := 0; from < total; from += bandSize {
		b, made := createBand(c, clients, from, bandSize)
		run.bands = append(run.bands, b)
		ids = append(ids, made...)
		log.Printf("large account, %s: %d -> %d names: %.0f creates/s, p99 %s, CPU %s a call, %d refused", d, b.from, b.to, b.create.perSecond, b.create.p99, b.create.cpu, b.refused)
	}
	if run.spread, err = spreadBand(s, newClient(s, tok), clients, total, bandSize); err != nil {
		s.stop()
		return run, err
	}
	log.Printf("large account, %s: the same %d creates over %d accounts: %.0f/s, p99 %s, %d refused", d, bandSize, clients,
		run.spread.create.perSecond, run.spread.create.p99, run.spread.refused)
	run.updates = updateBand(c, clients, ids, min(bandSize, len(ids)))
	log.Printf("large account, %s: %d updates: %.0f/s, p99 %s, CPU %s a call, %d refused", d, run.updates.to, run.updates.create.perSecond,
		run.updates.create.p99, run.updates.create.cpu, run.updates.refused)
	if run.dnsMints, run.dnsRepoints, err = accountDNSUpdates(s, newClient(s, tok), acc, clients, bandSize); err != nil {
		s.stop()
		return run, err
	}
	log.Printf("large account, %s: DNS UPDATE %d mints %.0f/s p99 %s CPU %s, repoints %.0f/s p99 %s CPU %s", d, run.dnsMints.to,
		run.dnsMints.create.perSecond, run.dnsMints.create.p99, run.dnsMints.create.cpu,
		run.dnsRepoints.create.perSecond, run.dnsRepoints.create.p99, run.dnsRepoints.create.cpu)
	s.stop()
	if !million {
		return run, nil
	}
	const mark = 1_000_000
	before := mark - bandSize/2
	if err := seedAccount(d, dsn, acc, total, before); err != nil {
		return run, err
	}
	if d == storage.Postgres {
		if err := settle(dsn); err != nil {
			return run, err
		}
	}
	if s, err = start(bin, dir, corefile); err != nil {
		return run, err
	}
	defer s.stop()
	c.base = fmt.Sprintf("http://127.0.0.1:%d", s.api)
	run.million, _ = createBand(c, clients, before, bandSize)
	log.Printf("large account, %s: %d -> %d names: %.0f creates/s, p99 %s, %d refused", d, run.million.from, run.million.to,
		run.million.create.perSecond, run.million.create.p99, run.million.refused)
	return run, nil
}

// freshStore is a new store of d for a server in dir, named name: the
// certificate key, the database (a file in dir, or on the server pg) and
// what start waits for. drop removes a PostgreSQL database.
func freshStore(dir string, d storage.Dialect, pg, name string) (dsn string, drop func(), err error) {
	drop = func() {}
	if err := writeKey(dir); err != nil {
		return "", drop, err
	}
	dsn = filepath.Join(dir, name+".db")
	if d == storage.Postgres {
		if dsn, drop, err = pgDatabase(pg, "hostmint_bench_"+name); err != nil {
			return "", func() {}, err
		}
	}
	if err := seed(d, dsn, 1); err != nil { // the domain, and the name start waits for
		drop()
		return "", func() {}, err
	}
	return dsn, drop, nil
}

// newAccountID is newAccount that also returns the account's id.
func newAccountID(s *server, admin *apiClient, name string) (string, *apiClient, error) {
	var acc struct{ ID string }
	if err := admin.call("POST", "/api/admin/accounts", map[string]any{"name": name, "plan": "business", "cap": 10_000_000}, 201, &acc); err != nil {
		return "", nil, err
	}
	var key struct{ Key string }
	if err := admin.call("POST", "/api/admin/accounts/"+acc.ID+"/keys", map[string]any{"name": "bench"}, 201, &key); err != nil {
		return "", nil, err
	}
	return acc.ID, newClient(s, key.Key), nil
}

// createBand posts n creates from clients callers sharing one key, and
// returns the band and the ids made; a refusal is counted, not fatal,
// since counting them is the point.
func createBand(c *apiClient, clients, from, n int) (band, []string) {
	ids := make([]string, n)
	b := timeBand(clients, n, func(i int) bool {
		var h struct{ ID string }
		err := c.call("POST", "/api/v1/hostnames", map[string]string{"ip": largeAddr(from + i)}, 201, &h)
		ids[i] = h.ID
		return err == nil
	})
	b.from, b.to = from, from+n
	return b, slices.DeleteFunc(ids, func(id string) bool { return id == "" })
}

// spreadBand posts n creates from clients callers as createBand does, the
// i-th into the (i mod clients)-th of clients new accounts, so that callers
// at once write to different accounts.
func spreadBand(s *server, admin *apiClient, clients, from, n int) (band, error) {
	cs := make([]*apiClient, clients)
	for i := range cs {
		var err error
		if _, cs[i], err = newAccountID(s, admin, fmt.Sprintf("bench-spread-%d", i)); err != nil {
			return band{}, err
		}
	}
	b := timeBand(clients, n, func(i int) bool {
		return cs[i%clients].call("POST", "/api/v1/hostnames", map[string]string{"ip": largeAddr(from + i)}, 201, nil) == nil
	})
	b.to = n
	return b, nil
}

// updateBand moves n of the account's hostnames (ids, spread over them)
// to new addresses from clients callers sharing one key.
func updateBand(c *apiClient, clients int, ids []string, n int) band {
	b := timeBand(clients, n, func(i int) bool {
		id := ids[i*len(ids)/n]
		return c.call("PUT", "/api/v1/hostnames/"+id, map[string]string{"ip": largeAddr(1<<22 + i)}, 200, nil) == nil
	})
	b.to = n
	return b
}

// accountDNSUpdates mints n hostnames into the account acc by DNS UPDATE
// (an A at a new label) from clients connections signed with one TSIG key
// of the account, then repoints each once, as updateBench does with an
// account per client.
func accountDNSUpdates(s *server, admin *apiClient, acc string, clients, n int) (mints, repoints band, err error) {
	u, err := newTSIGClient(admin, acc)
	if err != nil {
		return mints, repoints, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(s.dns))
	cs := make([]*updateClient, clients)
	for i := range cs {
		c := *u
		if c.conn, err = net.Dial("tcp", addr); err != nil {
			return mints, repoints, err
		}
		defer c.conn.Close()
		cs[i] = &c
	}
	per := n / clients
	run, err := mintAndRepoint(cs, per, "acct")
	mints.create, repoints.create = run.create, run.repoint
	mints.to, repoints.to = per*clients, per*clients
	return mints, repoints, err
}

// timeBand runs op(0..n-1) from clients callers at once and times each
// op that reports success; the others are counted as refused.
func timeBand(clients, n int, op func(i int) bool) band {
	return timeCallers(clients, n, func(_, i int) bool { return op(i) })
}

// timeCallers is timeBand that tells op which caller runs it, so that a
// caller can keep to one account whichever ops it happens to draw.
func timeCallers(clients, n int, op func(caller, i int) bool) band {
	var (
		next    atomic.Int64
		refused atomic.Int64
		mu      sync.Mutex
		all     = make([]time.Duration, 0, n)
		wg      sync.WaitGroup
	)
	t0, busy0 := time.Now(), cpuBusy()
	for k := range clients {
		wg.Go(func() {
			var ds []time.Duration
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					break
				}
				t := time.Now()
				if !op(k, i) {
					refused.Add(1)
					continue
				}
				ds = append(ds, time.Since(t))
			}
			mu.Lock()
			all = append(all, ds...)
			mu.Unlock()
		})
	}
	wg.Wait()
	b := band{refused: int(refused.Load())}
	if len(all) > 0 {
		b.create = summarise(all, time.Since(t0))
		b.create.cpu = (cpuBusy() - busy0) / time.Duration(len(all))
	}
	return b
}

// largeAddr is a distinct public address per name of the large account.
func largeAddr(i int) string {
	return fmt.Sprintf("%d.%d.%d.%d", 31+i>>24&63, i>>16&255, i>>8&255, i&255)
}

// seedAccount bulk-loads live hostnames from..to-1 into account, as an
// import would, so that the millionth create is timed without creating a
// million through the API first.
func seedAccount(d storage.Dialect, dsn, account string, from, to int) error {
	ctx := context.Background()
	s, err := storage.Open(ctx, d, dsn)
	if err != nil {
		return err
	}
	defer s.Close()
	dom, err := s.Reader().DomainByName(ctx, zone)
	if err != nil {
		return err
	}
	now := time.Now().UnixMilli()
	const batch = 5000
	for start := from; start < to; start += batch {
		hs := make([]storage.Hostname, 0, batch)
		for i := start; i < min(to, start+batch); i++ {
			label := fmt.Sprintf("s%07d", i)
			ip := largeAddr(i)
			hs = append(hs, storage.Hostname{ID: "h_" + label, AccountID: account, DomainID: dom.ID, Label: label,
				Name: label + "." + zone, IP: ip, Addrs: ip, Class: "public", Certificate: "self",
				Status: storage.StatusLive, CreatedAt: now, UpdatedAt: now, ExpiresAt: now + 7*24*3600*1000})
		}
		if _, err := s.Write(ctx, func(ctx context.Context, tx *storage.Tx) error { return tx.InsertHostnames(ctx, hs) }); err != nil {
			return err
		}
	}
	return nil
}

// printAccountTable writes a row per band and a column pair per store, as
// text or Markdown, then the last band's rate against the first's.
func printAccountTable(w io.Writer, runs []accountRun, clients int, markdown bool) {
	if len(runs) == 0 {
		return
	}
	cell := func(b band) string {
		return fmt.Sprintf("%.0f/s, p99 %.1f ms, %d refused", b.create.perSecond, float64(b.create.p99.Microseconds())/1000, b.refused)
	}
	line := func(name string, cells []string) {
		if markdown {
			fmt.Fprintf(w, "| %s | %s |\n", name, strings.Join(cells, " | "))
			return
		}
		out := fmt.Sprintf("%-26s", name)
		for _, c := range cells {
			out += fmt.Sprintf(" %-34s", c)
		}
		fmt.Fprintln(w, out)
	}
	head := []string{}
	for _, r := range runs {
		head = append(head, fmt.Sprintf("%s creates", r.dialect))
	}
	fmt.Fprintln(w)
	line("names in the account", head)
	if markdown {
		fmt.Fprintf(w, "|---%s|\n", strings.Repeat("|---", len(runs)))
	}
	for i := range runs[0].bands {
		cells := []string{}
		for _, r := range runs {
			cells = append(cells, cell(r.bands[i]))
		}
		line(fmt.Sprintf("%d k → %d k", runs[0].bands[i].from/1000, runs[0].bands[i].to/1000), cells)
	}
	if runs[0].updates.to > 0 {
		cells := []string{}
		for _, r := range runs {
			cells = append(cells, cell(r.updates))
		}
		line(fmt.Sprintf("%d updates across them", runs[0].updates.to), cells)
	}
	for _, row := range []struct {
		name string
		of   func(r accountRun) band
	}{{"DNS UPDATE mints", func(r accountRun) band { return r.dnsMints }}, {"DNS UPDATE repoints", func(r accountRun) band { return r.dnsRepoints }}} {
		if row.of(runs[0]).to == 0 {
			continue
		}
		cells := []string{}
		for _, r := range runs {
			cells = append(cells, cell(row.of(r)))
		}
		line(fmt.Sprintf("%d %s", row.of(runs[0]).to, row.name), cells)
	}
	if runs[0].million.to > 0 {
		cells := []string{}
		for _, r := range runs {
			cells = append(cells, cell(r.million))
		}
		line(fmt.Sprintf("%d → %d (the 1 000 000th)", runs[0].million.from, runs[0].million.to), cells)
	}
	if runs[0].spread.to > 0 {
		cells, ratios := []string{}, []string{}
		for _, r := range runs {
			cells = append(cells, cell(r.spread))
			ratios = append(ratios, fmt.Sprintf("%.2f", mean(r.bands)/r.spread.create.perSecond))
		}
		line(fmt.Sprintf("%d creates, %d accounts", runs[0].spread.to, clients), cells)
		line("one account / many", ratios)
	}
	cells := []string{}
	for _, r := range runs {
		first, last := r.bands[0].create.perSecond, r.bands[len(r.bands)-1].create.perSecond
		cells = append(cells, fmt.Sprintf("%.2f", last/first))
	}
	line("last band / first (>= 0.7)", cells)
	fmt.Fprintf(w, "\none business account, %d clients at once, profile 1\n", clients)
}

// mean is the bands' mean rate.
func mean(bs []band) float64 {
	var sum float64
	for _, b := range bs {
		sum += b.create.perSecond
	}
	return sum / float64(len(bs))
}
