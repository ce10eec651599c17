package storage_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
)

// names lists dir: where a backup went, and whatever else was left there.
func names(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// A backup is written beside its name and only then named: it succeeds
// with the file alone in its directory, reports its size, and otherwise
// (the name taken, cancelled before or while it copies) leaves no file
// and no partial copy behind.
func TestBackupPartial(t *testing.T) {
	s := storagetest.Open(t, storage.SQLite)
	fill(t, s)
	// About 6 MB, so that the copy is seen under way.
	addChanges(t, s, 20000, 300)
	defer storage.SetBackupTick(time.Millisecond)()
	for _, tc := range []struct {
		name   string
		taken  bool // file exists already
		before bool // cancelled before it starts
		// cancel, given a report, says whether to cancel the backup now.
		cancel func(p storage.BackupProgress) bool
		err    string   // in the error; "": the backup succeeds
		left   []string // the directory afterwards
	}{
		{name: "complete", left: []string{"b.db"}},
		{name: "name taken", taken: true, err: "already exists", left: []string{"b.db"}},
		{name: "cancelled before", before: true, err: "context canceled"},
		{name: "cancelled while copying", cancel: func(p storage.BackupProgress) bool { return p.Written > 0 }, err: "context canceled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "b.db")
			if tc.taken {
				if err := os.WriteFile(file, []byte("older"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if tc.before {
				cancel()
			}
			var reports []storage.BackupProgress
			err := s.BackupWith(ctx, file, storage.BackupOptions{Progress: func(p storage.BackupProgress) {
				reports = append(reports, p)
				if tc.cancel != nil && tc.cancel(p) {
					cancel()
				}
			}})
			if (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("backup: %v, want %q", err, tc.err)
			}
			if got := names(t, dir); !slices.Equal(got, tc.left) {
				t.Fatalf("left %q in the directory, want %q", got, tc.left)
			}
			if tc.cancel != nil && !slices.ContainsFunc(reports, func(p storage.BackupProgress) bool { return p.Written > 0 }) {
				t.Errorf("cancelled with no report of the copy under way: %+v", reports)
			}
			if b, _ := os.ReadFile(file); tc.taken && string(b) != "older" {
				t.Errorf("the file already there was changed to %d bytes", len(b))
			}
			if tc.err != "" {
				if len(reports) > 0 && reports[len(reports)-1].Done {
					t.Errorf("a failed backup reported done: %+v", reports[len(reports)-1])
				}
				return
			}
			fi, err := os.Stat(file)
			if err != nil {
				t.Fatal(err)
			}
			last := reports[len(reports)-1]
			if !last.Done || last.Written != fi.Size() || last.Estimate < fi.Size()/2 {
				t.Errorf("last report %+v; the backup is %d bytes", last, fi.Size())
			}
			b, err := storage.Open(t.Context(), storage.SQLite, file)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			if _, err := storage.Counts(t.Context(), s, b); err != nil {
				t.Fatal(err)
			}
		})
	}
}
