package main

import (
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strings"
	"time"
)

// printPeersTable writes the peers' figures at every size, each with
// Hostmint's figure over it in parentheses, as text or Markdown.
func printPeersTable(w io.Writer, rs []result, clients, ops int, markdown bool) {
	const nameWidth, cellWidth = 52, 20
	head := fmt.Sprintf("%-*s", nameWidth, "Peers: names")
	sep := strings.Repeat("-", nameWidth+(cellWidth+1)*len(rs))
	if markdown {
		head, sep = "| Peers: names", "|---"
		for range rs {
			sep += "|---:"
		}
		sep += "|"
	}
	for _, r := range rs {
		if markdown {
			head += fmt.Sprintf(" | %d", r.names)
		} else {
			head += fmt.Sprintf(" %*d", cellWidth, r.names)
		}
	}
	if markdown {
		fmt.Fprintf(w, "\n%s |\n%s\n", head, sep)
	} else {
		fmt.Fprintf(w, "\n%s\n%s\n", head, sep)
	}
	row := func(name string, cell func(r result) string) {
		line := fmt.Sprintf("%-*s", nameWidth, name)
		if markdown {
			line = "| " + name
		}
		for _, r := range rs {
			if markdown {
				line += " | " + cell(r)
			} else {
				line += fmt.Sprintf(" %*s", cellWidth, cell(r))
			}
		}
		if markdown {
			line += " |"
		}
		fmt.Fprintln(w, line)
	}
	na := func(result) string { return "n/a" }

	// Each peer's figure, then Hostmint's over it: above 1 Hostmint is
	// ahead on a rate, below 1 on a time or on memory.
	qps := func(host, v float64) string { return vs(fmt.Sprintf("%.0f", v), host, v) }
	sec := func(host, v time.Duration) string {
		return vs(fmt.Sprintf("%.2f s", v.Seconds()), float64(host), float64(v))
	}
	ms := func(host, v time.Duration) string {
		return vs(fmt.Sprintf("%.1f ms", float64(v.Microseconds())/1000), float64(host), float64(v))
	}
	mib := func(host, v float64) string { return vs(fmt.Sprintf("%.0f MiB", v), host, v) }
	workers := rs[0].peers.knot.workers

	row("DNS q/s: Hostmint (hostname plugin, SQLite)", func(r result) string { return qps(0, r.hostQPS) })
	row("DNS q/s: CoreDNS file plugin", func(r result) string { return qps(r.hostQPS, r.fileQPS) })
	row(fmt.Sprintf("DNS q/s: Knot (%d UDP workers)", workers), func(r result) string { return qps(r.hostQPS, r.peers.knot.qps) })
	row("DNS q/s: PowerDNS (gpgsql)", func(r result) string { return qps(r.hostQPS, r.peers.pdns.qps) })
	row("signed, DO bit, q/s: Hostmint", func(r result) string { return qps(0, r.signed) })
	row("signed, DO bit, q/s: Knot (signed at load)", func(r result) string { return qps(r.signed, r.peers.knot.signed) })
	row("signed, DO bit, q/s: PowerDNS (signs as it answers)", func(r result) string { return qps(r.signed, r.peers.pdns.signed) })
	row("signed, DO bit, q/s: CoreDNS file plugin", na)
	// fast_udp's figures over the same peers' (the budget's ratios).
	row("DNS q/s: Hostmint with fast_udp", func(r result) string { return qps(0, r.fastQPS) })
	row(fmt.Sprintf("  over Knot (%d UDP workers)", workers), func(r result) string { return over(r.fastQPS, r.peers.knot.qps) })
	row("  over PowerDNS", func(r result) string { return over(r.fastQPS, r.peers.pdns.qps) })
	row("signed, DO bit, q/s: Hostmint with fast_udp", func(r result) string { return qps(0, r.fastSigned) })
	row("  over Knot signed", func(r result) string { return over(r.fastSigned, r.peers.knot.signed) })
	row("  over PowerDNS signed", func(r result) string { return over(r.fastSigned, r.peers.pdns.signed) })
	us := func(host, v time.Duration) string {
		return vs(fmt.Sprintf("%.2f µs", float64(v.Nanoseconds())/1000), float64(host), float64(v))
	}
	row("server CPU per answer: Hostmint", func(r result) string { return us(0, r.hostCPU) })
	row("server CPU per answer: CoreDNS file plugin", func(r result) string { return us(r.hostCPU, r.fileCPU) })
	row("server CPU per answer: Knot", func(r result) string { return us(r.hostCPU, r.peers.knot.cpu) })
	row("server CPU per answer: PowerDNS", func(r result) string { return us(r.hostCPU, r.peers.pdns.cpu) })
	row("server CPU per answer: Hostmint with fast_udp", func(r result) string { return us(0, r.fastCPU) })
	row("signed, server CPU per answer: Hostmint", func(r result) string { return us(0, r.signedCPU) })
	row("signed, server CPU per answer: Knot", func(r result) string { return us(r.signedCPU, r.peers.knot.signedCPU) })
	row("signed, server CPU per answer: PowerDNS", func(r result) string { return us(r.signedCPU, r.peers.pdns.signedCPU) })
	row("start-up until answering: Hostmint, SQLite", func(r result) string { return sec(0, r.startSQLite) })
	row("start-up: CoreDNS file plugin", func(r result) string { return sec(r.startSQLite, r.startFile) })
	row("start-up: Knot", func(r result) string { return sec(r.startSQLite, r.peers.knot.start) })
	row("start-up: Knot signed (signing the zone)", func(r result) string { return sec(0, r.peers.knot.startSigned) })
	row("start-up until answering: Hostmint, PostgreSQL", func(r result) string { return sec(0, r.startPG) })
	row("start-up: PowerDNS", func(r result) string { return sec(r.startPG, r.peers.pdns.start) })
	row("start-up: PowerDNS signed", func(r result) string { return sec(0, r.peers.pdns.startSigned) })
	row("bulk load: PowerDNS (COPY, then VACUUM ANALYZE)", func(r result) string { return sec(0, r.peers.pdns.load) })
	row("RSS after start-up: Hostmint, SQLite", func(r result) string { return mib(0, r.rssSQLite) })
	row("RSS after start-up: CoreDNS file plugin", func(r result) string { return mib(r.rssSQLite, r.rssFileStart) })
	row("RSS after start-up: Knot", func(r result) string { return mib(r.rssSQLite, r.peers.knot.rss) })
	row("RSS after start-up: Knot signed", func(r result) string { return mib(0, r.peers.knot.rssSigned) })
	row("RSS after start-up: Hostmint, PostgreSQL", func(r result) string { return mib(0, r.rssPG) })
	row("RSS after start-up: PowerDNS (pdns_server alone)", func(r result) string { return mib(r.rssPG, r.peers.pdns.rss) })
	row("RSS after start-up: PowerDNS signed", func(r result) string { return mib(0, r.peers.pdns.rssSigned) })
	row(fmt.Sprintf("API creates/s: Hostmint, %d clients", clients), func(r result) string { return qps(0, r.create.perSecond) })
	row("API creates/s: PowerDNS (PATCH, a new name)", func(r result) string { return qps(r.create.perSecond, r.peers.pdns.create.perSecond) })
	row("API create p50: Hostmint", func(r result) string { return ms(0, r.create.p50) })
	row("API create p50: PowerDNS", func(r result) string { return ms(r.create.p50, r.peers.pdns.create.p50) })
	row("API create p99: Hostmint", func(r result) string { return ms(0, r.create.p99) })
	row("API create p99: PowerDNS", func(r result) string { return ms(r.create.p99, r.peers.pdns.create.p99) })
	row("API updates/s: Hostmint", func(r result) string { return qps(0, r.update.perSecond) })
	row("API updates/s: PowerDNS (PATCH, a new address)", func(r result) string { return qps(r.update.perSecond, r.peers.pdns.update.perSecond) })
	row("API update p50: Hostmint", func(r result) string { return ms(0, r.update.p50) })
	row("API update p50: PowerDNS", func(r result) string { return ms(r.update.p50, r.peers.pdns.update.p50) })
	row("API update p99: Hostmint", func(r result) string { return ms(0, r.update.p99) })
	row("API update p99: PowerDNS", func(r result) string { return ms(r.update.p99, r.peers.pdns.update.p99) })
	row("API writes: Knot, CoreDNS file plugin (no HTTP API)", na)

	fmt.Fprintf(w, "\n(x) = Hostmint's figure / the peer's: above 1 Hostmint is ahead on q/s and writes/s, below 1 on time and memory.\n"+
		"q/s against Hostmint on SQLite (its dnsperf runs); start-up and RSS of the file plugin and Knot against Hostmint on SQLite,\n"+
		"of PowerDNS (gpgsql on the same PostgreSQL, database of its own) against Hostmint on PostgreSQL; RSS is the server process\n"+
		"alone (VmRSS), without PostgreSQL's. Knot %s, %d UDP workers, zone file in memory, signed at load with ECDSAP256SHA256/NSEC.\n"+
		"PowerDNS %s: caches and threads at their defaults (packet cache, 1 receiver and 3 distributor threads); names loaded\n"+
		"with COPY; API-RECTIFY off for the zone (on, the default, each PATCH reads the whole zone); signed by pdnsutil secure-zone\n"+
		"(ecdsa256, one CSK), ordernames written with one SQL UPDATE, restarted. API writes: %d clients, %d PATCHes (one rrset\n"+
		"REPLACE of an A record each) of new names, then as many of a new address, against Hostmint's %d creates then updates.\n",
		peerVersion("knotd"), workers, peerVersion("pdns_server"), clients, ops, ops)
}

// vs is text followed by host/v in parentheses, or text alone when there
// is no numerator (a row of Hostmint's, or a part skipped), or "-" when v
// was not measured.
func vs(text string, host, v float64) string {
	switch {
	case v == 0:
		return "-"
	case host == 0:
		return text
	}
	return fmt.Sprintf("%s (%.2f)", text, host/v)
}

// over is host/v alone, "-" when either was not measured.
func over(host, v float64) string {
	if host == 0 || v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", host/v)
}

var versionNumber = regexp.MustCompile(`[0-9]+\.[0-9]+\.[0-9]+`)

// peerVersion is the version bin prints of itself, for the table's note.
func peerVersion(bin string) string {
	out, _ := exec.Command(bin, "--version").CombinedOutput()
	if v := versionNumber.Find(out); v != nil {
		return string(v)
	}
	return "(version unknown)"
}
