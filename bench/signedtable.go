package main

import (
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// printSigned writes a row per figure and a column per size.
func printSigned(w io.Writer, runs []signedRun, markdown bool) {
	if len(runs) == 0 {
		return
	}
	sec := func(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
	mib := func(v float64) string { return fmt.Sprintf("%.0f MiB", v) }
	num := func(v int) string { return strconv.Itoa(v) }
	ratio := func(a, b float64) string { return fmt.Sprintf("%.2f", a/b) }
	micro := func(v time.Duration) string { return fmt.Sprintf("%.2f µs", float64(v.Nanoseconds())/1000) }
	rows := []struct {
		name, target string
		cell         func(r signedRun) string
	}{
		{"unsigned: RSS after start-up", "", func(r signedRun) string { return mib(r.rssStart) }},
		{"unsigned: AXFR", "", func(r signedRun) string { return sec(r.unsigned.d) }},
		{"unsigned: AXFR records", "", func(r signedRun) string { return num(r.unsigned.records) }},
		{"unsigned: RSS after the AXFR", "", func(r signedRun) string { return mib(r.rssUnsigned) }},
		{"signed: first AXFR, from the PATCH's 200", "< 10 s at 100k", func(r signedRun) string { return sec(r.first.d) }},
		{"signed: first AXFR, server CPU", "", func(r signedRun) string { return sec(r.first.cpu) }},
		{"signed: first AXFR, secondary's CPU (this process)", "", func(r signedRun) string { return sec(r.first.ownCPU) }},
		{"signed: first AXFR, AXFRs asked for", "", func(r signedRun) string { return num(r.first.tries) }},
		{"signed: AXFR records", "", func(r signedRun) string { return num(r.first.records) }},
		{"signed: records / unsigned", "", func(r signedRun) string { return ratio(float64(r.first.records), float64(r.unsigned.records)) }},
		{"signed: second AXFR (signatures cached)", "", func(r signedRun) string { return sec(r.second.d) }},
		{"signed: second AXFR, server CPU", "", func(r signedRun) string { return sec(r.second.cpu) }},
		{"signed: second AXFR, secondary's CPU", "", func(r signedRun) string { return sec(r.second.ownCPU) }},
		{"signed: RSS peak during the first AXFR", "", func(r signedRun) string { return mib(r.peakFirst) }},
		{"signed: RSS after both AXFRs", "< 1 GB at 1M", func(r signedRun) string { return mib(r.rssSigned) }},
		{"signed: RSS / unsigned (after start-up)", "", func(r signedRun) string { return ratio(r.rssSigned, r.rssStart) }},
		{fmt.Sprintf("signed: IXFR after a write p50 (%d writes)", signedUpdates), "", func(r signedRun) string { return ms(r.ixfr.p50) }},
		{"signed: IXFR after a write p99", "< 1 s", func(r signedRun) string { return ms(r.ixfr.p99) }},
		{"signed: the IXFR alone p50 / p99", "", func(r signedRun) string { return ms(r.ixfrAlone.p50) + " / " + ms(r.ixfrAlone.p99) }},
		{"signed: IXFRs asked again / whole zone / bad RRSIGs", "0 / 0 / 0", func(r signedRun) string {
			return fmt.Sprintf("%d / %d / %d", r.ixfrRetries, r.ixfrWhole, r.badSigs)
		}},
		{"restart: answering", "", func(r signedRun) string { return sec(r.startAnswer) }},
		{"restart: first signed AXFR, from process start", "", func(r signedRun) string { return sec(r.atStart) }},
		{"restart: server CPU until then (after answering)", "", func(r signedRun) string { return sec(r.restart.cpu) }},
		{"restart: AXFRs asked for", "", func(r signedRun) string { return num(r.restart.tries) }},
		{"restart: RSS after it", "< 1 GB at 1M", func(r signedRun) string { return mib(r.rssRestart) }},
		{"DNS, DO bit: unsigned q/s", "", func(r signedRun) string { return fmt.Sprintf("%.0f", r.qps.qps) }},
		{"DNS, DO bit: signed q/s", "", func(r signedRun) string { return fmt.Sprintf("%.0f", r.qpsSigned.qps) }},
		{"DNS: signed / unsigned q/s", ">= 0.9", func(r signedRun) string { return ratio(r.qpsSigned.qps, r.qps.qps) }},
		{"DNS: server CPU per answer, unsigned", "", func(r signedRun) string { return micro(r.qps.cpu) }},
		{"DNS: server CPU per answer, signed", "", func(r signedRun) string { return micro(r.qpsSigned.cpu) }},
		{"API creates/s, unsigned", "", func(r signedRun) string { return fmt.Sprintf("%.0f", r.creates.create.perSecond) }},
		{"API creates/s, signed", "", func(r signedRun) string { return fmt.Sprintf("%.0f", r.createsSigned.create.perSecond) }},
		{"API creates: signed / unsigned", ">= 0.9", func(r signedRun) string {
			return ratio(r.createsSigned.create.perSecond, r.creates.create.perSecond)
		}},
		{"API create p99, unsigned / signed", "", func(r signedRun) string {
			return ms(r.creates.create.p99) + " / " + ms(r.createsSigned.create.p99)
		}},
		{"API creates refused, unsigned / signed", "0 / 0", func(r signedRun) string {
			return fmt.Sprintf("%d / %d", r.creates.refused, r.createsSigned.refused)
		}},
	}
	fmt.Fprintln(w)
	head := fmt.Sprintf("%-52s", "names (signed zones to secondaries)")
	if markdown {
		head = "| names (signed zones to secondaries)"
	}
	for _, r := range runs {
		if markdown {
			head += fmt.Sprintf(" | %d", r.names)
		} else {
			head += fmt.Sprintf(" %16d", r.names)
		}
	}
	if markdown {
		fmt.Fprintf(w, "%s | target |\n|---%s|---|\n", head, strings.Repeat("|---:", len(runs)))
	} else {
		fmt.Fprintf(w, "%s  target\n%s\n", head, strings.Repeat("-", 52+17*len(runs)+16))
	}
	for _, row := range rows {
		line := fmt.Sprintf("%-52s", row.name)
		if markdown {
			line = "| " + row.name
		}
		for _, r := range runs {
			if markdown {
				line += " | " + row.cell(r)
			} else {
				line += fmt.Sprintf(" %16s", row.cell(r))
			}
		}
		if markdown {
			fmt.Fprintf(w, "%s | %s |\n", line, row.target)
		} else {
			fmt.Fprintf(w, "%s  %s\n", line, row.target)
		}
	}
	fmt.Fprintf(w, "\n%d CPUs, %s (%s/%s, %s); SQLite; dnsperf %d s a run, 4 clients, existing names, DO bit;\n"+
		"API: %d creates from %d clients before signing and as many after; IXFR over TCP after each of %d API updates\n"+
		"(from the NOTIFY: the primary holds each NOTIFY 100 ms to gather writes, xfr/notify.go)\n",
		runtime.NumCPU(), cpuModel(), runtime.GOOS, runtime.GOARCH, runtime.Version(), signedSeconds,
		signedCreates, signedClients, signedUpdates)
}
