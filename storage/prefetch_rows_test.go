package storage

import (
	"slices"
	"testing"
)

// What a put-off write drops is derived: the rows are named from the
// models, the tables a trigger writes from the migrations.
func TestPrefetchRowsDerived(t *testing.T) {
	s, err := Open(t.Context(), SQLite, t.TempDir()+"/rows.db")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := triggered()["hostnames"]; !slices.Equal(got, []string{"accounts"}) {
		t.Errorf("the triggers on hostnames write %v, want [accounts] (the active-hostname counters)", got)
	}
	for _, c := range []struct {
		v           any
		table, want string
	}{
		{&Hostname{ID: "h_1"}, "hostnames", "h_1\x00"},
		{&Account{ID: "acc"}, "accounts", "acc\x00"},
		{&poolDomainRow{Domain: Domain{ID: "dom"}}, "domains", "dom\x00"},
	} {
		if table, key := rowOf(s.db, c.v); table != c.table || key != c.want {
			t.Errorf("%T: row %s %q, want %s %q", c.v, table, key, c.table, c.want)
		}
	}
	r := prefetched{calls: []pgCall{{dest: &Hostname{ID: "h_1"}}, {dest: &Account{ID: "acc"}}}, found: []bool{true, false}}
	for _, c := range []struct {
		table, key string
		want       bool
	}{
		{"hostnames", "h_1\x00", true},
		{"hostnames", "h_2\x00", false}, // the account it did not find is no matter
		{"records", "h_1\x00", false},
	} {
		if got := r.reads(s.db, c.table, c.key); got != c.want {
			t.Errorf("reads(%s %q) = %v, want %v", c.table, c.key, got, c.want)
		}
	}
	r.found[1] = true
	if !r.reads(s.db, "hostnames", "h_2\x00") {
		t.Error("a read that found an account kept past an update of a hostname (the counter's trigger)")
	}
}
