package e2e

import (
	"database/sql"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/miekg/dns"
)

// A hot standby cancels a read that holds back the replay of the
// primary's changes. Here the standby has no patience at all
// (max_standby_streaming_delay = 0, no hot_standby_feedback) and the
// primary takes the hostnames table's ACCESS EXCLUSIVE lock every few
// milliseconds, as a migration or a truncating vacuum does: the read-only
// node's snapshot load is cancelled, it says so, retries, and loads once
// the locks stop.
func TestReadOnlyNodeReplicationConflict(t *testing.T) {
	t.Parallel()
	c := newPGCluster(t)
	c.createDB(t, "hostmint")
	w := start(t, options{dialect: storage.Postgres, dsn: c.multiHostDSN("hostmint")})
	acct, _ := w.account("business")
	// Enough names that loading them takes longer than the gap between locks.
	c.seedNames(t, "hostmint", acct, "c", 100000)
	db, err := sql.Open("postgres", c.primaryDSN("hostmint"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c.waitStandbyCaughtUp(t)
	pgAppend(t, filepath.Join(c.standby.dir, "postgresql.auto.conf"), "\nmax_standby_streaming_delay = 0\nhot_standby_feedback = off\n")
	c.run(t, time.Minute, "pg_ctl", "reload", "-D", c.standby.dir)

	stop := make(chan struct{})
	var locks sync.WaitGroup
	locks.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			db.Exec("BEGIN; LOCK TABLE hostnames IN ACCESS EXCLUSIVE MODE; COMMIT")
			time.Sleep(20 * time.Millisecond)
		}
	})
	o := options{dialect: storage.Postgres, dsn: c.standbyDSN("hostmint") + " readonly", dir: w.dir}
	text, r := corefile(t, &o)
	p, _ := launch(t, r, text)
	const said = "a replication conflict on the standby cancelled loading the index; retrying"
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(p.output(), said) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	close(stop)
	locks.Wait()
	if !strings.Contains(p.output(), said) {
		t.Fatalf("no replication conflict in 20 s of locks; the node's output:\n%s", p.output())
	}
	if err := r.waitReady(30 * time.Second); err != nil {
		t.Fatalf("%v; output:\n%s", err, p.output())
	}
	r.resolves("c100000.example.org", dns.TypeA, seededAddr(100000))
}
