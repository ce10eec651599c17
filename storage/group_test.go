package storage_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
)

// Writes of one key arriving together share transactions; each keeps its
// own answer and audit entry, and one that fails, before or after it
// wrote, or on a row a constraint refuses, changes nothing while the
// others commit.
func TestWriteGrouped(t *testing.T) {
	eachStore(t, func(t *testing.T, s *storage.Store) {
		refused := errors.New("refused by its rule")
		const n = 96
		if _, err := s.Write(t.Context(), func(ctx context.Context, tx *storage.Tx) error {
			return tx.InsertAccount(ctx, &storage.Account{ID: "taken", Name: "x", Plan: "free", CreatedAt: 1})
		}); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make([]error, n)
		entries := make([]*storage.AuditEntry, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				e := &storage.AuditEntry{Actor: "test", Action: "POST /x", Status: 201}
				entries[i] = e
				ctx := storage.WithAudit(t.Context(), e)
				_, errs[i] = s.WriteGrouped(ctx, "key", func(ctx context.Context, tx *storage.Tx) error {
					a := &storage.Account{ID: fmt.Sprintf("a%03d", i), Name: "x", Plan: "free", CreatedAt: 1}
					switch i % 4 {
					case 1: // refused before writing
						return refused
					case 2: // refused after writing
						if err := tx.InsertAccount(ctx, a); err != nil {
							return err
						}
						return refused
					case 3: // its put-off row breaks the primary key
						a.ID = "taken"
					}
					tx.InsertLater(storage.KindAccount, a.ID, a)
					return tx.Changed(ctx, storage.KindAccount, a.ID)
				})
			}()
		}
		wg.Wait()
		for i, err := range errs {
			want := error(nil)
			switch {
			case i%4 == 1, i%4 == 2:
				want = refused
			case i%4 == 3:
				want = storage.ErrConflict
			}
			if !errors.Is(err, want) && !(want == nil && err == nil) {
				t.Errorf("write %d: %v, want %v", i, err, want)
			}
			if got, wantRows := entries[i].Audited(), map[bool]int{true: 1, false: 0}[want == nil]; got != wantRows {
				t.Errorf("write %d: audited %d times, want %d", i, got, wantRows)
			}
		}
		accounts, err := s.Dump(t.Context(), "accounts")
		if err != nil {
			t.Fatal(err)
		}
		if len(accounts) != n/4+1 { // every 4th, and "taken"
			t.Errorf("%d accounts written, want %d", len(accounts), n/4+1)
		}
		audit, _ := s.Dump(t.Context(), "audit_log")
		if len(audit) != n/4 {
			t.Errorf("%d audit rows, want %d (one per committed write)", len(audit), n/4)
		}
		// Each entry knows its own row: the status set afterwards lands there.
		for i, e := range entries {
			if err := s.SetAuditStatus(t.Context(), e, 200+i); err != nil {
				t.Fatal(err)
			}
		}
		rows, _ := s.Dump(t.Context(), "audit_log")
		seen := map[string]bool{}
		for _, r := range rows {
			seen[r[7]+"|"+r[5]] = true // status | object (id, at, actor, account_id, action, object, result, status, ...)
		}
		for i := 0; i < n; i += 4 {
			if key := fmt.Sprintf("%d|account:a%03d", 200+i, i); !seen[key] {
				t.Errorf("no audit row with status %d for account a%03d: %v", 200+i, i, rows)
				break
			}
		}
		if s.Batches() == 0 {
			t.Error("no two writes shared a transaction")
		}
		t.Logf("%d batches of more than one write", s.Batches())
	})
}

// A caller that stops waiting gets an answer at once; the key's next
// writes are not held up by it.
func TestWriteGroupedGone(t *testing.T) {
	eachStore(t, func(t *testing.T, s *storage.Store) {
		release := make(chan struct{})
		go s.WriteGrouped(t.Context(), "k", func(ctx context.Context, tx *storage.Tx) error {
			<-release
			return nil
		})
		time.Sleep(50 * time.Millisecond)
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		if _, err := s.WriteGrouped(ctx, "k", func(ctx context.Context, tx *storage.Tx) error { return nil }); !errors.Is(err, storage.ErrUnavailable) {
			t.Errorf("a caller whose deadline passed: %v, want ErrUnavailable", err)
		}
		close(release)
		if _, err := s.WriteGrouped(t.Context(), "k", func(ctx context.Context, tx *storage.Tx) error { return nil }); err != nil {
			t.Errorf("the next write: %v", err)
		}
	})
}

// A caller that stops waiting once its write has begun in a batch waits
// for the batch, whose statements its leaving does not abort: the parts
// before it stay committed and it hears the outcome. A write that panics
// fails alone.
func TestWriteGroupedPartsHold(t *testing.T) {
	eachStore(t, func(t *testing.T, s *storage.Store) {
		release := make(chan struct{})
		go s.WriteGrouped(t.Context(), "k", func(ctx context.Context, tx *storage.Tx) error {
			<-release // holds the key while the next writes gather into one batch
			return nil
		})
		time.Sleep(50 * time.Millisecond)
		insert := func(ctx context.Context, tx *storage.Tx, id string) error {
			return tx.InsertAccount(ctx, &storage.Account{ID: id, Name: "x", Plan: "free", CreatedAt: 1})
		}
		errs := make([]error, 3)
		var wg sync.WaitGroup
		for i, fn := range []func(ctx context.Context, tx *storage.Tx) error{
			func(ctx context.Context, tx *storage.Tx) error { return insert(ctx, tx, "first") },
			func(ctx context.Context, tx *storage.Tx) error {
				time.Sleep(time.Second) // its caller leaves meanwhile
				return insert(ctx, tx, "left")
			},
			func(ctx context.Context, tx *storage.Tx) error { panic("a bug in a rule") },
		} {
			wg.Add(1)
			// Time for the batch to begin on a loaded machine (a caller
			// whose deadline passes before its write begins is told so),
			// and to leave while its part runs.
			ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
			if i != 1 { // only the second caller leaves
				ctx, cancel = context.WithCancel(t.Context())
			}
			go func() {
				defer wg.Done()
				defer cancel()
				_, errs[i] = s.WriteGrouped(ctx, "k", fn)
			}()
			time.Sleep(10 * time.Millisecond)
		}
		close(release)
		wg.Wait()
		if errs[0] != nil || errs[1] != nil || errs[2] == nil || !strings.Contains(errs[2].Error(), "panicked") {
			t.Errorf("answers %v; want the first two committed and the panic an error of its own", errs)
		}
		accounts, _ := s.Dump(t.Context(), "accounts")
		if len(accounts) != 2 {
			t.Errorf("%d accounts committed, want 2 (first and left)", len(accounts))
		}
	})
}

// A batch whose writes of one account overdraw its rate limit together is
// not run alone whole: that account's writes run alone, each meeting the
// limit as it would have, and the other accounts' commit again as a batch.
func TestWriteGroupedOverdrawnAccountAlone(t *testing.T) {
	eachStore(t, func(t *testing.T, s *storage.Store) {
		errOver := errors.New("over the limit")
		const (
			mine   = 4 // the limited account's writes: two fit its bucket
			others = 6 // other accounts', unlimited
		)
		if _, err := s.Write(t.Context(), func(ctx context.Context, tx *storage.Tx) error {
			return tx.InsertAccount(ctx, &storage.Account{ID: "limited", Name: "x", Plan: "free", CreatedAt: 1})
		}); err != nil {
			t.Fatal(err)
		}
		// One key holds the lane while the others queue behind it, so
		// that they all meet in the next batch.
		release, held := make(chan struct{}), make(chan struct{})
		go s.WriteGrouped(t.Context(), "limited", func(ctx context.Context, tx *storage.Tx) error {
			close(held)
			<-release
			return nil
		})
		<-held
		before := s.PipelineStats()
		var wg sync.WaitGroup
		errs := make([]error, mine+others)
		for i := range mine + others {
			key := "limited"
			if i >= mine {
				key = fmt.Sprintf("other%d", i) // their lanes may differ: then they batch apart
			}
			wg.Go(func() {
				_, errs[i] = s.WriteGrouped(t.Context(), key, func(ctx context.Context, tx *storage.Tx) error {
					if key == "limited" {
						tx.ChargeLater("limited", "test", 1000, 10, 1020, func(int64) error { return errOver })
					}
					a := &storage.Account{ID: fmt.Sprintf("a%02d", i), Name: "x", Plan: "free", CreatedAt: 1}
					tx.InsertLater(storage.KindAccount, a.ID, a)
					return tx.Changed(ctx, storage.KindAccount, a.ID)
				})
			})
			time.Sleep(5 * time.Millisecond)
		}
		close(release)
		wg.Wait()
		over := 0
		for i, err := range errs {
			switch {
			case i < mine && errors.Is(err, errOver):
				over++
			case err != nil:
				t.Errorf("write %d: %v", i, err)
			}
		}
		if over != mine-2 {
			t.Errorf("%d of the limited account's %d writes refused, want %d", over, mine, mine-2)
		}
		after := s.PipelineStats()
		if alone := after.Alone - before.Alone; alone > mine {
			t.Errorf("%d writes ran alone, want at most the limited account's %d", alone, mine)
		}
		if after.Parts-before.Parts < 2 {
			t.Errorf("%d writes committed in batches, want the other accounts' (%+v)", after.Parts-before.Parts, after)
		}
	})
}
