package hostnames

import (
	"strings"
	"testing"

	"github.com/hostmint/hostmint/storage"
)

// due makes a queue from "account:id" words, e.g. "a:1 b:1".
func due(words string) []storage.Hostname {
	var q []storage.Hostname
	for _, w := range strings.Fields(words) {
		a, id, _ := strings.Cut(w, ":")
		q = append(q, storage.Hostname{ID: a + id, AccountID: a})
	}
	return q
}

func ids(hs []storage.Hostname) string {
	var out []string
	for _, h := range hs {
		out = append(out, h.ID)
	}
	return strings.Join(out, " ")
}

func TestFairPoolTake(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name            string
		parallel, share int
		running         string // started before, still resolving
		queue           string
		started, rest   string
	}{
		{"empty", 16, 4, "", "", "", ""},
		{"accounts take turns, whatever the queue's order", 5, 4, "",
			"a:1 a:2 a:3 a:4 a:5 b:1 b:2 c:1", "a1 b1 c1 a2 b2", "a3 a4 a5"},
		{"one account holds at most its share", 16, 4, "",
			"a:1 a:2 a:3 a:4 a:5 a:6 b:1", "a1 b1 a2 a3 a4", "a5 a6"},
		{"the share counts what is already resolving", 16, 4, "a:1 a:2 a:3",
			"a:4 a:5 b:1", "a4 b1", "a5"},
		{"what is resolving is not started again, and leaves the queue", 16, 4, "a:1 b:1",
			"a:1 b:1 a:2 b:2", "a2 b2", ""},
		{"a full pool starts nothing", 2, 4, "a:1 b:1",
			"c:1 c:2", "", "c1 c2"},
		{"the last free slot goes to the first account in the queue", 3, 4, "a:1 a:2",
			"b:1 a:3 c:1", "b1", "a3 c1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newFairPool(tc.parallel, tc.share)
			if got, _ := p.take(due(tc.running)); len(got) != len(due(tc.running)) {
				t.Fatalf("starting %q: started %q", tc.running, ids(got))
			}
			started, rest := p.take(due(tc.queue))
			if ids(started) != tc.started || ids(rest) != tc.rest {
				t.Errorf("take = %q, rest %q; want %q, rest %q", ids(started), ids(rest), tc.started, tc.rest)
			}
			for _, a := range []string{"a", "b", "c"} {
				if p.held[a] > tc.share {
					t.Errorf("account %s holds %d, share %d", a, p.held[a], tc.share)
				}
			}
			if len(p.busy) > tc.parallel {
				t.Errorf("%d resolving, at most %d", len(p.busy), tc.parallel)
			}
		})
	}
}

// Releasing a slot lets the account's next target start, and only one.
func TestFairPoolRelease(t *testing.T) {
	t.Parallel()
	p := newFairPool(16, 2)
	started, rest := p.take(due("a:1 a:2 a:3 a:4"))
	if ids(started) != "a1 a2" || ids(rest) != "a3 a4" {
		t.Fatalf("take = %q, rest %q", ids(started), ids(rest))
	}
	p.release(&started[0])
	p.release(&started[0]) // a second release of the same one frees nothing more
	started, rest = p.take(rest)
	if ids(started) != "a3" || ids(rest) != "a4" {
		t.Fatalf("after a release: take = %q, rest %q", ids(started), ids(rest))
	}
	for _, id := range []string{"a2", "a3"} {
		p.release(&storage.Hostname{ID: id, AccountID: "a"})
	}
	if len(p.busy) != 0 || len(p.held) != 0 {
		t.Fatalf("after releasing everything: busy %v, held %v", p.busy, p.held)
	}
}
