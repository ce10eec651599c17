package main

import (
	"bytes"
	"flag"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
)

var migrateRows = flag.Int("migrate-rows", 0, "BenchmarkMigrate's hostnames (0: skip it)")

// BenchmarkMigrate runs the built CLI's migrate of a SQLite store holding
// -migrate-rows hostnames into a new PostgreSQL database, and reports its
// rows/s, the hostnames table's, and its peak RSS. It is skipped without
// the flag, so that no ordinary run fills a store that large:
//
//	go test ./cmd/hostmint -run '^$' -bench Migrate -benchtime 1x -migrate-rows 1000000 -timeout 1h
func BenchmarkMigrate(b *testing.B) {
	if *migrateRows == 0 {
		b.Skip("set -migrate-rows N")
	}
	dir := b.TempDir()
	cli := filepath.Join(dir, "hostmint")
	if out, err := exec.Command("go", "build", "-o", cli, ".").CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	src := filepath.Join(dir, "src.db")
	t0 := time.Now()
	seedStore(b, src, *migrateRows)
	b.Logf("seeded %d hostnames in %.1fs", *migrateRows, time.Since(t0).Seconds())
	hostnames := regexp.MustCompile(`\] hostnames +\d+ rows in \S+ \((\d+) rows/s\)`)
	summary := regexp.MustCompile(`(\d+) rows in \S+ \((\d+) rows/s\)\n`)
	for b.Loop() {
		b.StopTimer()
		to := storagetest.DSN(b, storage.Postgres)
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(cli, "migrate", "-from", "sqlite:"+src, "-to", to)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		b.StartTimer()
		err := cmd.Run()
		b.StopTimer()
		if err != nil {
			b.Fatalf("migrate: %v\n%s%s", err, stdout.String(), stderr.String())
		}
		// Printed whole: the benchmark's log keeps only its first lines.
		fmt.Printf("hostmint migrate of %d hostnames, SQLite to PostgreSQL:\n%s%s", *migrateRows, stderr.String(), stdout.String())
		if m := summary.FindStringSubmatch(stdout.String()); m != nil {
			rate, _ := strconv.ParseFloat(m[2], 64)
			b.ReportMetric(rate, "rows/s")
		}
		if m := hostnames.FindStringSubmatch(stderr.String()); m != nil {
			rate, _ := strconv.ParseFloat(m[1], 64)
			b.ReportMetric(rate, "hostnames-rows/s")
		}
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MiB") // Maxrss is in KiB on Linux
		}
		b.StartTimer()
	}
}
