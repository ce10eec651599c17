package storage_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
)

// TestNotifyWakesOtherNode: a commit on one node reaches another node's
// feed through NOTIFY, long before its poll would, including commits made
// in a burst (announced together).
func TestNotifyWakesOtherNode(t *testing.T) {
	ctx := context.Background()
	a := storagetest.Open(t, storage.Postgres)
	b, err := storage.Open(ctx, storage.Postgres, a.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	f := storage.NewFeed(b, &recorder{}, time.Hour, slog.New(slog.DiscardHandler))
	fctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.Run(fctx)
	}()
	defer func() { cancel(); <-done }()
	waitFor(t, "the feed to load", f.Loaded)

	for _, burst := range []int{1, 20} {
		var last int64
		for i := range burst {
			last = change(t, a, "h"+string(rune('a'+i%26)))
		}
		// Not WaitApplied: it would wake the feed itself.
		for deadline := time.Now().Add(2 * time.Second); f.Applied() < last; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("burst of %d: change %d not applied on the other node (applied %d)", burst, last, f.Applied())
			}
		}
	}
}
