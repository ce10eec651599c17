package main

import (
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// pgProfile is where a band's time went on PostgreSQL: the statements the
// server ran (pg_stat_statements, when the server loads it) and the CPU of
// each kind of process on the machine.
type pgProfile struct {
	statements []pgStatementStat
	cpu        map[string]time.Duration // by process name
	calls      int                      // the band's operations, to divide by
}

type pgStatementStat struct {
	query           string
	calls           int64
	total, meanTime float64 // ms
	rows            int64
}

// startPGProfile resets the statement counts (if pg_stat_statements is
// there) and notes every process's CPU so far; the profile's end does the
// rest. A server without the extension gives the CPU alone.
func startPGProfile(admin string) (end func(calls int) (*pgProfile, error), err error) {
	db, err := sql.Open("postgres", admin)
	if err != nil {
		return nil, err
	}
	_, serr := db.Exec("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
	if serr == nil {
		_, serr = db.Exec("SELECT pg_stat_statements_reset()")
	}
	before := processCPU()
	return func(calls int) (*pgProfile, error) {
		defer db.Close()
		p := &pgProfile{cpu: map[string]time.Duration{}, calls: max(calls, 1)}
		for name, d := range processCPU() {
			p.cpu[name] = d - before[name]
		}
		if serr != nil {
			return p, nil
		}
		rows, err := db.Query(`SELECT query, calls, total_exec_time, mean_exec_time, rows FROM pg_stat_statements
WHERE query NOT LIKE '%pg_stat_statements%' ORDER BY total_exec_time DESC LIMIT 12`)
		if err != nil {
			return p, err
		}
		defer rows.Close()
		for rows.Next() {
			var s pgStatementStat
			if err := rows.Scan(&s.query, &s.calls, &s.total, &s.meanTime, &s.rows); err != nil {
				return p, err
			}
			p.statements = append(p.statements, s)
		}
		return p, rows.Err()
	}, nil
}

// processCPU is the CPU time (user and system) every process has spent
// so far, summed by its name: postgres, coredns, the bench itself.
func processCPU() map[string]time.Duration {
	out := map[string]time.Duration{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		open, end := strings.IndexByte(string(b), '('), strings.LastIndexByte(string(b), ')')
		if open < 0 || end < open {
			continue
		}
		fields := strings.Fields(string(b)[end+1:])
		if len(fields) < 13 {
			continue
		}
		utime, _ := strconv.ParseInt(fields[11], 10, 64)
		stime, _ := strconv.ParseInt(fields[12], 10, 64)
		out[string(b)[open+1:end]] += time.Duration(utime+stime) * time.Second / 100 // USER_HZ
	}
	return out
}

// print writes the profile as Markdown.
func (p *pgProfile) print(w io.Writer, title string) {
	fmt.Fprintf(w, "\n%s: CPU a call by process\n\n| process | CPU a call |\n|---|---:|\n", title)
	for _, name := range []string{"postgres", "coredns", "bench"} {
		fmt.Fprintf(w, "| %s | %.3f ms |\n", name, float64(p.cpu[name].Microseconds())/1000/float64(p.calls))
	}
	if len(p.statements) == 0 {
		fmt.Fprintln(w, "\n(no pg_stat_statements: add it to shared_preload_libraries for the statements)")
		return
	}
	fmt.Fprintf(w, "\n%s: PostgreSQL's statements by time spent\n\n| calls | calls a write | total | mean | rows | statement |\n|---:|---:|---:|---:|---:|---|\n", title)
	for _, s := range p.statements {
		q := strings.Join(strings.Fields(s.query), " ")
		if len(q) > 110 {
			q = q[:110] + "…"
		}
		fmt.Fprintf(w, "| %d | %.2f | %.0f ms | %.3f ms | %d | `%s` |\n", s.calls, float64(s.calls)/float64(p.calls), s.total, s.meanTime, s.rows,
			strings.ReplaceAll(q, "|", "\\|"))
	}
}
