package e2e

import (
	"syscall"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
)

// The built binary killed with SIGKILL in the middle of a stream of writes,
// then started again on the same store: every write acknowledged before the
// kill is there (API) and served (DNS) with its address, and no hostname is
// half-written. A write that got no answer may or may not have landed (its
// commit may have beaten the kill), but whole if it did.
func TestCrashKeepsAcknowledgedWrites(t *testing.T) {
	for _, d := range []storage.Dialect{storage.SQLite, storage.Postgres} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			s, p := spawn(t, options{dialect: d})
			l := newLoad(s, 3)
			l.run(0, "") // DNS is checked after the restart; before it, the other tests cover it
			t.Cleanup(l.halt)
			l.waitAcked(t, 60)
			// Past the first burst, so the kill lands in a steady stream.
			time.Sleep(time.Duration(200+time.Now().UnixNano()%300) * time.Millisecond)

			killAt := time.Now()
			p.kill(syscall.SIGKILL)
			l.halt()
			ops := l.snapshot()
			l.report(t, ops, nil)
			for i := range ops {
				o := &ops[i]
				// An answer read after killAt was still sent before the kill.
				switch {
				case o.acked():
				case o.status != 0:
					t.Errorf("%v: refused before the kill, with the database up", o)
				case o.end.Before(killAt):
					t.Errorf("%v: no answer before the kill", o)
				}
			}

			s2, _ := spawn(t, options{dialect: d, dir: s.dir, dsn: s.dsn})
			noAnswer := func(o *op) verdict {
				if o.status == 0 {
					return inDoubt
				}
				return answered(o)
			}
			l.settle(t, s2.api, s2.dnsAddr, fates(ops, noAnswer), 3*time.Second, true)
		})
	}
}
