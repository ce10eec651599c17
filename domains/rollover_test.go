package domains

import (
	"context"
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/seal"
	"github.com/hostmint/hostmint/storage"
	"github.com/hostmint/hostmint/storage/storagetest"
)

// A key rollover goes start, then finish after its wait: two keys in the
// set (both signing) and both DS while it runs, the new key alone after;
// a step out of turn, or early, is refused (409) and changes nothing.
func TestRollover(t *testing.T) {
	for _, d := range storagetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			k := make(seal.Key, 32)
			rand.Read(k)
			s := New(storagetest.Open(t, d), k)
			now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
			s.now = func() time.Time { return now }
			b := func(v bool) *bool { return &v }
			step := func(v string) *string { return &v }
			dom, err := s.Create(ctx, Input{Name: step("example.org")})
			if err != nil {
				t.Fatal(err)
			}
			patch := func(in Input, wantCode string) *storage.Domain {
				t.Helper()
				got, err := s.Patch(ctx, dom.ID, in)
				code := ""
				if e, ok := apierror.As(err); ok {
					code = e.Code
				}
				if wantCode == "" && err != nil || wantCode != "" && code != wantCode {
					t.Fatalf("patch %+v: %v, want %q", in, err, wantCode)
				}
				return got
			}
			patch(Input{Rollover: step("start")}, "CONFLICT") // not signed
			signed := patch(Input{DNSSEC: b(true)}, "")
			old := signed.DNSKEY
			for _, early := range []string{"finish", "cancel"} {
				patch(Input{Rollover: step(early)}, "CONFLICT")
			}
			patch(Input{Rollover: step("activate")}, "BAD_REQUEST")
			started := patch(Input{Rollover: step("start")}, "")
			if started.Rollover != storage.RolloverStarted || started.NextDNSKEY == "" || len(DS(started)) != 2 || started.DNSKEY != old {
				t.Fatalf("started: %+v", started)
			}
			opened, err := OpenSigner(started, k)
			if err != nil || len(opened.Set) != 2 || opened.DNSKEY.String() != old {
				t.Fatalf("the signer of a started rollover: %v %v", opened, err)
			}
			patch(Input{Rollover: step("start")}, "CONFLICT")
			patch(Input{Rollover: step("finish"), DSPublished: b(true)}, "CONFLICT") // within the hour
			now = now.Add(time.Hour)
			if _, err := s.Patch(ctx, dom.ID, Input{Rollover: step("finish")}); err == nil || !strings.Contains(err.Error(), "ds_published") {
				t.Fatalf("finish without ds_published: %v", err)
			}
			done := patch(Input{Rollover: step("finish"), DSPublished: b(true)}, "")
			if done.Rollover != "" || done.DNSKEY != started.NextDNSKEY || done.NextDNSKEY != "" || len(DS(done)) != 1 || !done.DSPublished {
				t.Fatalf("finished: %+v", done)
			}
			if opened, err := OpenSigner(done, k); err != nil || len(opened.Set) != 1 || opened.DNSKEY.String() != done.DNSKEY {
				t.Fatalf("the signer after the rollover: %v %v", opened, err)
			}
			// Cancelled: the old key alone again.
			again := patch(Input{Rollover: step("start")}, "")
			cancelled := patch(Input{Rollover: step("cancel")}, "")
			if cancelled.Rollover != "" || cancelled.DNSKEY != done.DNSKEY || cancelled.NextDNSKEY != "" || again.NextDNSKEY == "" {
				t.Fatalf("cancelled: %+v", cancelled)
			}
		})
	}
}
