package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"
)

// printTable writes one row per figure and one column per size, as text
// or as a Markdown table (for the README).
func printTable(w io.Writer, rs []result, seconds, clients, ops, updates int, markdown bool) {
	head := fmt.Sprintf("%-44s", "names")
	sep := strings.Repeat("-", 44+15*len(rs)+10)
	if markdown {
		head, sep = "| names", "|---"
		for range rs {
			sep += "|---:"
		}
		sep += "|---|"
	}
	for _, r := range rs {
		if markdown {
			head += fmt.Sprintf(" | %d", r.names)
		} else {
			head += fmt.Sprintf(" %14d", r.names)
		}
	}
	if markdown {
		fmt.Fprintf(w, "\n%s | target |\n%s\n", head, sep)
	} else {
		fmt.Fprintf(w, "\n%s  %s\n%s\n", head, "target", sep)
	}
	row := func(name, target string, cell func(r result) string) {
		if markdown {
			line := "| " + name
			for _, r := range rs {
				line += " | " + cell(r)
			}
			fmt.Fprintf(w, "%s | %s |\n", line, target)
			return
		}
		line := fmt.Sprintf("%-44s", name)
		for _, r := range rs {
			line += fmt.Sprintf(" %14s", cell(r))
		}
		fmt.Fprintf(w, "%s  %s\n", line, target)
	}
	qps := func(v float64) string { return fmt.Sprintf("%.0f", v) }
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
	sec := func(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
	mib := func(v float64) string { return fmt.Sprintf("%.0f MiB", v) }
	micro := func(v time.Duration) string { return fmt.Sprintf("%.2f µs", float64(v.Nanoseconds())/1000) }

	row("DNS: hostname plugin, q/s", "", func(r result) string { return qps(r.hostQPS) })
	row("DNS: file plugin, same names, q/s", "", func(r result) string { return qps(r.fileQPS) })
	row("DNS: ratio hostname / file", ">= 0.9", func(r result) string { return fmt.Sprintf("%.2f", r.hostQPS/r.fileQPS) })
	row("DNS: hostname plugin, server CPU per answer", "", func(r result) string { return micro(r.hostCPU) })
	row("DNS: signed zone, DO bit, q/s", "", func(r result) string { return qps(r.signed) })
	row("DNS: signed, server CPU per answer", "", func(r result) string { return micro(r.signedCPU) })
	row("DNS: ratio signed / unsigned", ">= 0.7", func(r result) string { return fmt.Sprintf("%.2f", r.signed/r.hostQPS) })
	row("DNS: fast_udp, q/s", "", func(r result) string { return qps(r.fastQPS) })
	row("DNS: fast_udp, server CPU per answer", "", func(r result) string { return micro(r.fastCPU) })
	row("DNS: fast_udp, signed zone, DO bit, q/s", "", func(r result) string { return qps(r.fastSigned) })
	row("DNS: fast_udp, signed, server CPU per answer", "", func(r result) string { return micro(r.fastSignedCPU) })
	row("start-up until answering, SQLite", "< 10 s", func(r result) string { return sec(r.startSQLite) })
	row("start-up until answering, PostgreSQL", "< 10 s", func(r result) string { return sec(r.startPG) })
	row("start-up until answering, file plugin", "", func(r result) string { return sec(r.startFile) })
	row("RSS after start-up, SQLite", "< 400 MB", func(r result) string { return mib(r.rssSQLite) })
	row("RSS after start-up, PostgreSQL", "< 400 MB", func(r result) string { return mib(r.rssPG) })
	row("RSS peak during start-up, SQLite", "", func(r result) string { return mib(r.peakSQLite) })
	row("RSS peak during start-up, PostgreSQL", "", func(r result) string { return mib(r.peakPG) })
	row("RSS after serving (unsigned), SQLite", "", func(r result) string { return mib(r.rssServing) })
	row("RSS, file plugin, after serving", "", func(r result) string { return mib(r.rssFile) })
	row(fmt.Sprintf("API create p50, PostgreSQL, %d clients", clients), "", func(r result) string { return ms(r.create.p50) })
	row("API create p99", "< 25 ms", func(r result) string { return ms(r.create.p99) })
	row("API creates/s", "", func(r result) string { return qps(r.create.perSecond) })
	row("API create, machine CPU per call", "", func(r result) string { return ms(r.create.cpu) })
	row("API update p50", "", func(r result) string { return ms(r.update.p50) })
	row("API update p99", "< 25 ms", func(r result) string { return ms(r.update.p99) })
	row("API updates/s", "", func(r result) string { return qps(r.update.perSecond) })
	row("API update, machine CPU per call", "", func(r result) string { return ms(r.update.cpu) })
	row("DNS UPDATE create p50, PostgreSQL", "", func(r result) string { return ms(r.updatePG.create.p50) })
	row("DNS UPDATE create p99", "< 25 ms", func(r result) string { return ms(r.updatePG.create.p99) })
	row("DNS UPDATE creates/s", "", func(r result) string { return qps(r.updatePG.create.perSecond) })
	row("DNS UPDATE creates/s / API creates/s", ">= 0.8", func(r result) string { return ratio(r.updatePG.create, r.create) })
	row("DNS UPDATE create, machine CPU per call", "", func(r result) string { return ms(r.updatePG.create.cpu) })
	row("DNS UPDATE repoint p50", "", func(r result) string { return ms(r.updatePG.repoint.p50) })
	row("DNS UPDATE repoint p99", "< 25 ms", func(r result) string { return ms(r.updatePG.repoint.p99) })
	row("DNS UPDATE repoints/s", "", func(r result) string { return qps(r.updatePG.repoint.perSecond) })
	row("DNS UPDATE repoints/s / API updates/s", ">= 0.8", func(r result) string { return ratio(r.updatePG.repoint, r.update) })
	row("DNS UPDATE repoint, machine CPU per call", "", func(r result) string { return ms(r.updatePG.repoint.cpu) })
	row("DNS UPDATE create p50, SQLite", "", func(r result) string { return ms(r.updateSQLite.create.p50) })
	row("DNS UPDATE create p99, SQLite", "", func(r result) string { return ms(r.updateSQLite.create.p99) })
	row("DNS UPDATE creates/s, SQLite", "", func(r result) string { return qps(r.updateSQLite.create.perSecond) })
	row("DNS UPDATE repoint p50, SQLite", "", func(r result) string { return ms(r.updateSQLite.repoint.p50) })
	row("DNS UPDATE repoint p99, SQLite", "", func(r result) string { return ms(r.updateSQLite.repoint.p99) })
	row("DNS UPDATE repoints/s, SQLite", "", func(r result) string { return qps(r.updateSQLite.repoint.perSecond) })
	row(fmt.Sprintf("propagation A -> B p50 (%d updates)", updates), "", func(r result) string { return ms(r.prop.p50) })
	row("propagation A -> B p99", "< 1 s (100 ms)", func(r result) string { return ms(r.prop.p99) })
	row("propagation A -> B max", "", func(r result) string { return ms(r.prop.max) })
	row("AXFR of the whole zone, PostgreSQL", "", func(r result) string { return sec(r.xfr.axfr) })
	row("RSS before the AXFR", "", func(r result) string { return mib(r.xfr.rssBefore) })
	row("RSS peak during the AXFR", "", func(r result) string { return mib(r.xfr.rssAt) })
	row("IXFR after a write p50 (API 200 to IXFR held)", "", func(r result) string { return ms(r.xfr.ixfr.p50) })
	row("IXFR after a write max", "< 1 s", func(r result) string { return ms(r.xfr.ixfr.max) })
	row("seeding (bulk insert), SQLite", "", func(r result) string { return sec(r.seedSQLite) })
	row("seeding (bulk insert), PostgreSQL", "", func(r result) string { return sec(r.seedPG) })
	fmt.Fprintf(w, "\n%d CPUs, %s (%s/%s, %s); dnsperf %d s a run, 4 clients; API: %d clients, %d creates then %d updates\n",
		runtime.NumCPU(), cpuModel(), runtime.GOOS, runtime.GOARCH, runtime.Version(), seconds, clients, ops, ops)
	fmt.Fprintf(w, "DNS UPDATE: %d clients, one account, TSIG key (hmac-sha256) and TCP connection each; %d creates (an A at a new label),\n"+
		"then %d repoints (delete A + add A in one message); on PostgreSQL on the API's server (the ratios are against its rates),\n"+
		"on SQLite alone: the API is not measured there\n", clients, ops, ops)
}

// ratio is UPDATE's rate over the API's, or "-" when either was skipped.
func ratio(update, api latencies) string {
	if update.perSecond == 0 || api.perSecond == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", update.perSecond/api.perSecond)
}

// cpuModel is the processor's name as Linux reports it.
func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}
