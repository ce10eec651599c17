package storage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// BackupProgress is BackupWith's report while it writes.
type BackupProgress struct {
	// Written is the bytes of the backup on disk so far; Estimate about its
	// final size: the source's pages in use. VACUUM INTO repacks them, so
	// the backup may end smaller than the estimate.
	Written, Estimate int64
	Elapsed           time.Duration
	Done              bool // the backup is in place: Written is its size
}

// BackupOptions tune BackupWith.
type BackupOptions struct {
	// Progress, if set, is called every backupTick while the copy runs
	// (on another goroutine, one call at a time) and once with Done on
	// the caller's when the backup is in place.
	Progress func(BackupProgress)
}

// backupTick is how often BackupWith looks at the partial file. VACUUM
// INTO has no progress hook of its own, but it writes its pages as it
// goes, so the file's size is how far it got.
var backupTick = 250 * time.Millisecond

// Backup writes a consistent copy of a SQLite store to file (BackupWith
// without progress reports).
func (s *Store) Backup(ctx context.Context, file string) error {
	return s.BackupWith(ctx, file, BackupOptions{})
}

// BackupWith writes a consistent copy of a SQLite store to file with
// VACUUM INTO, which reads one snapshot while the service keeps writing
// (WAL) and writes a compact database that opens as a store as it is.
// file must not exist, and is never overwritten. The copy is written to
// FILE.partial-* beside it and linked into place only once complete and
// synced: a failed or interrupted backup (ctx cancelled) removes the
// partial file and leaves no file, so nothing half written is ever named
// as a backup.
// PostgreSQL stores are backed up with pg_dump (docs/operations.md, Backups).
func (s *Store) BackupWith(ctx context.Context, file string, opts BackupOptions) error {
	if s.dialect != SQLite {
		return fmt.Errorf("storage: backup of a %s store: use pg_dump", s.dialect)
	}
	if _, err := os.Stat(file); err == nil {
		return fmt.Errorf("storage: backup: %s already exists", file)
	}
	start := time.Now()
	// Empty and private: VACUUM INTO fills an empty file and keeps its
	// mode (CreateTemp's 0600), and a backup holds what the store holds.
	// Beside file, so that linking it into place is one directory entry.
	f, err := os.CreateTemp(filepath.Dir(file), filepath.Base(file)+".partial-*")
	if err != nil {
		return fmt.Errorf("storage: backup: %w", err)
	}
	tmp := f.Name()
	f.Close()
	defer os.Remove(tmp) // gone once linked; on any failure the partial copy goes
	var estimate int64
	if opts.Progress != nil {
		if estimate, err = s.usedBytes(ctx); err != nil {
			return fmt.Errorf("storage: backup: %w", err)
		}
	}
	stop := watchSize(tmp, estimate, start, opts.Progress)
	_, err = s.db.DB.ExecContext(ctx, "VACUUM INTO ?", tmp)
	stop()
	if err != nil {
		return fmt.Errorf("storage: backup: %w", mapErr(err))
	}
	size, err := place(tmp, file)
	if err != nil {
		return fmt.Errorf("storage: backup: %w", err)
	}
	if opts.Progress != nil {
		opts.Progress(BackupProgress{Written: size, Estimate: estimate, Elapsed: time.Since(start), Done: true})
	}
	return nil
}

// usedBytes is the size of the pages of the database in use.
func (s *Store) usedBytes(ctx context.Context) (int64, error) {
	var pages, free, size int64
	for _, p := range []struct {
		q string
		v *int64
	}{{"PRAGMA page_count", &pages}, {"PRAGMA freelist_count", &free}, {"PRAGMA page_size", &size}} {
		if err := s.db.DB.QueryRowContext(ctx, p.q).Scan(p.v); err != nil {
			return 0, mapErr(err)
		}
	}
	return (pages - free) * size, nil
}

// watchSize reports file's size to progress every backupTick until the
// returned stop is called; stop returns once no report is running.
func watchSize(file string, estimate int64, start time.Time, progress func(BackupProgress)) (stop func()) {
	if progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(backupTick)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if fi, err := os.Stat(file); err == nil {
					progress(BackupProgress{Written: fi.Size(), Estimate: estimate, Elapsed: time.Since(start)})
				}
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// place makes the complete backup tmp durable and names it file, never
// replacing a file that appeared there meanwhile, and returns its size.
// SQLite does not sync what VACUUM INTO writes: a crash soon after could
// otherwise leave a backup that is named but not all on disk.
func place(tmp, file string) (int64, error) {
	f, err := os.Open(tmp)
	if err != nil {
		return 0, err
	}
	err = f.Sync()
	fi, serr := f.Stat()
	f.Close()
	if err = errors.Join(err, serr); err != nil {
		return 0, err
	}
	// A hard link fails where the name exists, where a rename would replace it.
	if err := os.Link(tmp, file); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return 0, fmt.Errorf("%s already exists", file)
		}
		// A file system without hard links: check, then rename.
		if _, serr := os.Stat(file); serr == nil {
			return 0, fmt.Errorf("%s already exists", file)
		}
		if err := os.Rename(tmp, file); err != nil {
			return 0, err
		}
	}
	if d, err := os.Open(filepath.Dir(file)); err == nil {
		d.Sync() // the new name itself; not every file system can sync a directory
		d.Close()
	}
	return fi.Size(), nil
}
