package storage_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/hostmint/hostmint/storage"
)

// The three reads of what a node serves for some hostnames, one statement
// on PostgreSQL, answer what each answers alone: names with records
// and challenges, one with none, one that does not exist, none asked.
func TestHostnamesWithRows(t *testing.T) {
	eachStore(t, func(t *testing.T, s *storage.Store) {
		seedServed(t, s)
		q := s.Reader()
		stmts := s.CountStatements()
		for _, ids := range [][]string{{"h-1", "h-2", "h-3", "h-none"}, {"h-3"}, {"h-none"}, nil} {
			stmts.Store(0)
			hs, rs, cs, err := q.HostnamesWithRows(t.Context(), ids)
			if err != nil {
				t.Fatal(err)
			}
			if want := map[bool]int64{true: 1, false: 3}[s.Dialect() == storage.Postgres]; len(ids) > 0 && stmts.Load() != want {
				t.Errorf("%v: %d statements, want %d", ids, stmts.Load(), want)
			}
			checkServed(t, q, ids, hs, rs, cs)
		}
	})
}

// ChangesServed reads the changes as ChangesAfter does and, on PostgreSQL
// in the same statement, the rows of the hostnames it is given: its
// Queries answer HostnamesWithRows for any of those from them, with no
// statement, as a read would; for ids it was not given, they read.
func TestChangesServed(t *testing.T) {
	all := []string{"h-1", "h-2", "h-3", "h-none"}
	cases := []struct {
		name   string
		hinted []string
		ask    []string
		gaps   bool
		read   bool // HostnamesWithRows sends a statement on PostgreSQL
	}{
		{"all given", all, all, false, false},
		{"some of those given", all, []string{"h-2", "h-none"}, false, false},
		{"with gaps", all, []string{"h-1"}, true, false},
		{"one not given", []string{"h-1"}, []string{"h-1", "h-2"}, false, true},
		{"none given", nil, []string{"h-1"}, false, true},
	}
	eachStore(t, func(t *testing.T, s *storage.Store) {
		seedServed(t, s)
		var ids []int64
		for _, ref := range []string{"h-1", "h-2", "h-3"} {
			ids = append(ids, change(t, s, ref))
		}
		stmts := s.CountStatements()
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				after, gaps := int64(0), []int64(nil)
				if c.gaps {
					after, gaps = ids[1], []int64{ids[0]}
				}
				want, err := s.Reader().ChangesAfter(t.Context(), after, gaps, 1000)
				if err != nil {
					t.Fatal(err)
				}
				stmts.Store(0)
				cs, q, err := s.Reader().ChangesServed(t.Context(), after, gaps, 1000, c.hinted)
				if err != nil {
					t.Fatal(err)
				}
				pg := s.Dialect() == storage.Postgres
				if n := stmts.Load(); pg && n != 1 {
					t.Errorf("ChangesServed: %d statements, want 1", n)
				}
				if !reflect.DeepEqual(cs, want) {
					t.Errorf("changes %+v, want %+v (ChangesAfter's)", cs, want)
				}
				stmts.Store(0)
				hs, rs, chs, err := q.HostnamesWithRows(t.Context(), c.ask)
				if err != nil {
					t.Fatal(err)
				}
				if n, read := stmts.Load(), c.read || !pg; (n > 0) != read {
					t.Errorf("HostnamesWithRows(%v): %d statements, want them: %v", c.ask, n, read)
				}
				checkServed(t, s.Reader(), c.ask, hs, rs, chs)
			})
		}
	})
}

// seedServed writes hostnames h-1 (two records), h-2 (a record and two
// challenges) and h-3 (none).
func seedServed(t testing.TB, s *storage.Store) {
	t.Helper()
	seed(t, s)
	insertHosts(t, s, host("h-1", acct, "one", storage.StatusLive, 0, 1),
		host("h-2", acct, "two", storage.StatusLive, 0, 2), host("h-3", acct, "three", storage.StatusLive, 0, 3))
	write(t, s, func(ctx context.Context, tx *storage.Tx) error {
		for i, id := range []string{"r-1", "r-2", "r-3"} {
			hn := []string{"h-1", "h-1", "h-2"}[i]
			if err := tx.InsertRecord(ctx, &storage.Record{ID: id, HostnameID: hn, Name: "x." + hn, Type: "TXT", Data: `{"text":"a"}`, CreatedAt: int64(i), UpdatedAt: int64(i)}); err != nil {
				return err
			}
		}
		for i, v := range []string{"a", "b"} {
			if err := tx.AddChallenge(ctx, &storage.Challenge{HostnameID: "h-2", Value: v, CreatedAt: int64(i)}, 2); err != nil {
				return err
			}
		}
		return nil
	})
}

// checkServed compares HostnamesWithRows's answer for ids with what each
// read of q answers alone.
func checkServed(t *testing.T, q storage.Queries, ids []string, hs []storage.Hostname, rs []storage.Record, cs []storage.Challenge) {
	t.Helper()
	wantH, err1 := q.HostnamesByID(t.Context(), ids)
	wantR, err2 := q.Records(t.Context(), ids...)
	wantC, err3 := q.Challenges(t.Context(), ids...)
	if err1 != nil || err2 != nil || err3 != nil {
		t.Fatal(err1, err2, err3)
	}
	if len(hs) != len(wantH) || len(hs) > 0 && !sameIDs(hs, wantH) {
		t.Errorf("%v: hostnames %+v, want %+v", ids, hs, wantH)
	}
	if len(rs) != len(wantR) || len(rs) > 0 && !reflect.DeepEqual(rs, wantR) {
		t.Errorf("%v: records %+v, want %+v", ids, rs, wantR)
	}
	if len(cs) != len(wantC) || len(cs) > 0 && !reflect.DeepEqual(cs, wantC) {
		t.Errorf("%v: challenges %+v, want %+v", ids, cs, wantC)
	}
}

// sameIDs tells whether a and b hold the same hostnames, in any order
// (the read is not ordered), each as read.
func sameIDs(a, b []storage.Hostname) bool {
	byID := map[string]storage.Hostname{}
	for _, h := range b {
		byID[h.ID] = h
	}
	for _, h := range a {
		if w, ok := byID[h.ID]; !ok || !reflect.DeepEqual(w, h) {
			return false
		}
	}
	return len(a) == len(b)
}
