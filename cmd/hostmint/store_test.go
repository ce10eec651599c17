package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
)

// seedStore makes a SQLite store at path holding an account, a domain and
// n live hostnames, written in bulk as an import would.
func seedStore(t testing.TB, path string, n int) {
	t.Helper()
	ctx := context.Background()
	s, err := storage.Open(ctx, storage.SQLite, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.Write(ctx, func(ctx context.Context, tx *storage.Tx) error {
		if err := tx.InsertAccount(ctx, &storage.Account{ID: "acc", Name: "seed", Plan: "business", Billing: true, CreatedAt: 1}); err != nil {
			return err
		}
		return tx.InsertDomain(ctx, &storage.Domain{ID: "dom", Name: "seed.example", Status: storage.DomainActive, CreatedAt: 1})
	})
	if err != nil {
		t.Fatal(err)
	}
	const batch = 5000
	for start := 0; start < n; start += batch {
		hs := make([]storage.Hostname, 0, batch)
		for i := start; i < min(n, start+batch); i++ {
			label := fmt.Sprintf("h%07d", i)
			ip := fmt.Sprintf("11.%d.%d.%d", i>>16&255, i>>8&255, i&255)
			hs = append(hs, storage.Hostname{ID: "h_" + label, AccountID: "acc", DomainID: "dom", Label: label,
				Name: label + ".seed.example", IP: ip, Addrs: ip, Class: "public", Certificate: "self",
				Status: storage.StatusLive, CreatedAt: 1, UpdatedAt: 1})
		}
		if _, err := s.Write(ctx, func(ctx context.Context, tx *storage.Tx) error { return tx.InsertHostnames(ctx, hs) }); err != nil {
			t.Fatal(err)
		}
	}
}

// targetArg is a new, empty store of dialect d as migrate's -to.
func targetArg(t *testing.T, d storage.Dialect) string {
	dsn := storagetest.DSN(t, d)
	if d == storage.SQLite {
		return "sqlite:" + dsn
	}
	return dsn
}

// tableLine is a table's line when it is copied.
var tableLine = regexp.MustCompile(`^\[ ?(\d+)/(\d+)\] (\w+) +(\d+) rows in \S+( \(\d+ rows/s\))?$`)

// Off a terminal, migrate writes one line per table as it is copied (to
// stderr, with the rows and time), and then the counts, a summary and the
// check.
func TestMigrateReports(t *testing.T) {
	src := filepath.Join(t.TempDir(), "src.db")
	seedStore(t, src, 450)
	for _, d := range storagetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(t.Context(), []string{"migrate", "-from", "sqlite:" + src, "-to", targetArg(t, d)}, &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
			}
			if strings.Contains(stderr.String(), "\r") {
				t.Errorf("progress redrawn in place off a terminal:\n%q", stderr.String())
			}
			tables := storage.Tables()
			want := map[string]int{"accounts": 1, "domains": 1, "hostnames": 450}
			lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
			if len(lines) != len(tables) {
				t.Fatalf("%d lines for %d tables:\n%s", len(lines), len(tables), stderr.String())
			}
			for i, l := range lines {
				m := tableLine.FindStringSubmatch(l)
				if m == nil || m[1] != strconv.Itoa(i+1) || m[2] != strconv.Itoa(len(tables)) || m[3] != tables[i] || m[4] != strconv.Itoa(want[tables[i]]) {
					t.Errorf("line %d %q, want table %s with %d rows", i+1, l, tables[i], want[tables[i]])
				}
				if (want[tables[i]] > 0) != (m != nil && m[5] != "") {
					t.Errorf("line %q: a rate wanted for the tables with rows, only", l)
				}
			}
			out := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
			if len(out) != len(tables)+3 || !strings.HasPrefix(out[0], "table ") {
				t.Fatalf("no count table:\n%s", stdout.String())
			}
			for i, table := range tables {
				if n := want[table]; !regexp.MustCompile(fmt.Sprintf(`^%s +%d +%d +$`, table, n, n)).MatchString(out[i+1]) {
					t.Errorf("count line %q, want %s with %d rows on both sides", out[i+1], table, n)
				}
			}
			summary := regexp.MustCompile(fmt.Sprintf(`^%d tables, 452 rows in \S+ \(\d+ rows/s\)$`, len(tables)))
			if !summary.MatchString(out[len(out)-2]) {
				t.Errorf("summary %q", out[len(out)-2])
			}
			if want := "copied sqlite store into " + string(d) + " store; counts match"; out[len(out)-1] != want {
				t.Errorf("last line %q, want %q", out[len(out)-1], want)
			}
		})
	}
}

// cancelOn cancels when what is written to it holds a mark, as ^C would
// at that point of the output.
type cancelOn struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	mark   string
	cancel func()
}

func (w *cancelOn) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.mark) {
		w.cancel()
	}
	return len(p), nil
}

// A migrate interrupted in the middle says that nothing was committed and
// that it may be run again, which is so: the target is empty, and the
// next run copies everything.
func TestMigrateInterrupted(t *testing.T) {
	src := filepath.Join(t.TempDir(), "src.db")
	seedStore(t, src, 450)
	for _, d := range storagetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			to := targetArg(t, d)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var stdout bytes.Buffer
			stderr := &cancelOn{mark: "] hostnames", cancel: cancel}
			args := []string{"migrate", "-from", "sqlite:" + src, "-to", to}
			if code := run(ctx, args, &stdout, stderr); code != exitFail {
				t.Fatalf("exit %d, want %d\n%s%s", code, exitFail, stdout.String(), stderr.buf.String())
			}
			got := stderr.buf.String()
			for _, want := range []string{"hostmint migrate: interrupted: ", "context canceled",
				"nothing was committed: the target is left as it was (empty); run migrate again"} {
				if !strings.Contains(got, want) {
					t.Errorf("no %q in\n%s", want, got)
				}
			}
			if stdout.Len() > 0 {
				t.Errorf("an interrupted migrate printed results:\n%s", stdout.String())
			}
			d, dsn, _ := parseStore(to)
			s, err := storage.Open(t.Context(), d, dsn)
			if err != nil {
				t.Fatal(err)
			}
			n, err := s.DataRows(t.Context())
			s.Close()
			if err != nil || n != 0 {
				t.Fatalf("the target holds %d rows (%v)", n, err)
			}
			stdout.Reset()
			var errs bytes.Buffer
			if code := run(t.Context(), args, &stdout, &errs); code != 0 || !strings.Contains(stdout.String(), "counts match") {
				t.Fatalf("run again: exit %d\n%s%s", code, stdout.String(), errs.String())
			}
		})
	}
}

// backup says where the backup went, its size and time; one that cannot
// be made says that nothing was, and leaves nothing beside the name.
func TestBackupReports(t *testing.T) {
	src := filepath.Join(t.TempDir(), "src.db")
	seedStore(t, src, 450)
	dir := t.TempDir()
	file := filepath.Join(dir, "b.db")
	var stdout, stderr bytes.Buffer
	if code := run(t.Context(), []string{"backup", "-from", "sqlite:" + src, "-to", file}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	if ok, _ := regexp.MatchString(`^backed up to \S+/b\.db: \d+\.\d KiB in \S+\n$`, stdout.String()); !ok || stderr.Len() > 0 {
		t.Errorf("stdout %q, stderr %q", stdout.String(), stderr.String())
	}
	stdout.Reset()
	if code := run(t.Context(), []string{"backup", "-from", "sqlite:" + src, "-to", file}, &stdout, &stderr); code != exitFail ||
		!strings.Contains(stderr.String(), "already exists") || !strings.Contains(stderr.String(), "no backup was made") {
		t.Errorf("backup over a file: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Errorf("%d files beside the backup", len(es)-1)
	}
}

// On a terminal the line in place is redrawn at most every progressEvery;
// a table done leaves its line; end finishes a line left open.
func TestProgressTerminal(t *testing.T) {
	var buf bytes.Buffer
	start := time.Unix(1e9, 0)
	now := start
	p := &progress{w: &buf, tty: true, start: start, now: func() time.Time { return now }}
	tp := storage.TableProgress{Table: "hostnames", N: 5, Of: 23, Total: 1000}
	steps := []struct {
		at   time.Duration
		rows int64
		done bool
		want string // "": nothing drawn
	}{
		{0, 0, false, "\r[ 5/23] hostnames                  0 of 1000 rows (0%) in 0s\x1b[K"},
		{100 * time.Millisecond, 200, false, ""},
		{300 * time.Millisecond, 400, false, "\r[ 5/23] hostnames                400 of 1000 rows (40%) in 300ms (1333 rows/s)\x1b[K"},
		{400 * time.Millisecond, 600, false, ""},
		{450 * time.Millisecond, 1000, true, "\r[ 5/23] hostnames               1000 rows in 450ms (2222 rows/s)\x1b[K\n"},
	}
	for _, st := range steps {
		now = start.Add(st.at)
		tp.Rows, tp.Done, tp.Elapsed = st.rows, st.done, st.at
		buf.Reset()
		p.table(tp)
		if buf.String() != st.want {
			t.Errorf("at %v:\n got %q\nwant %q", st.at, buf.String(), st.want)
		}
	}
	now = now.Add(time.Second)
	buf.Reset()
	p.backup(storage.BackupProgress{Written: 3 << 20, Estimate: 4 << 20, Elapsed: 2 * time.Second})
	p.end()
	if want := "\rbackup: 3.0 MiB of about 4.0 MiB (75%) 2.0s\x1b[K\n"; buf.String() != want {
		t.Errorf("backup:\n got %q\nwant %q", buf.String(), want)
	}
	if p.tables != 1 || p.rows != 1000 {
		t.Errorf("summed %d tables, %d rows", p.tables, p.rows)
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	regular := isTerminal(f)
	f.Close()
	if slices.Contains([]bool{isTerminal(&buf), regular, isTerminal(f)}, true) {
		t.Error("a buffer, a file or a closed file taken for a terminal")
	}
}
