package e2e

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hostmint/hostmint/storage"
	"github.com/lib/pq"
	"github.com/lib/pq/pqerror"
)

// pgStandbyName is the standby's application_name: the primary's
// synchronous_standby_names names it, so a commit on the primary returns
// only once this standby has flushed it.
const pgStandbyName = "hostmint_standby"

// pgCluster is a PostgreSQL primary with one synchronous streaming hot
// standby, on loopback, for a test that needs a real failover: a commit the
// primary acknowledged is on the standby, so it survives the primary being
// killed and the standby promoted.
type pgCluster struct {
	bin     string              // PostgreSQL's bin directory
	root    string              // holds both data directories and their logs
	cred    *syscall.Credential // the postgres OS user when we are root; nil otherwise
	env     []string            // the environment without PG* variables
	primary *pgNode
	standby *pgNode
}

// pgNode is one postmaster, started directly (not via pg_ctl start) so that
// it is our child and dies with the test process instead of outliving a
// test that timed out.
type pgNode struct {
	name string
	dir  string // data directory
	port int
	log  string
	done chan struct{} // closed once the postmaster has exited
	err  error         // how it exited; read only after done
}

// pgBinDir finds the server binaries, which are usually off PATH (Debian
// keeps them in /usr/lib/postgresql/N/bin), preferring version 15, which
// this helper was written against.
func pgBinDir() string {
	dirs := []string{"/usr/lib/postgresql/15/bin"}
	more, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	version := func(d string) float64 {
		v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(d)), 64)
		return v
	}
	sort.Slice(more, func(i, j int) bool { return version(more[i]) > version(more[j]) })
	dirs = append(dirs, more...)
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		dirs = append(dirs, filepath.Dir(p))
	}
next:
	for _, d := range dirs {
		for _, b := range []string{"initdb", "pg_ctl", "pg_basebackup", "postgres"} {
			if _, err := os.Stat(filepath.Join(d, b)); err != nil {
				continue next
			}
		}
		return d
	}
	return ""
}

// pgReachable says whether every directory above path lets others through:
// as root the data directories must live where the postgres user can reach
// them, and a TMPDIR under a private home would not do.
func pgReachable(path string) bool {
	for p := filepath.Dir(path); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm()&0o001 == 0 {
			return false
		}
		if p == filepath.Dir(p) {
			return true
		}
	}
}

// newPGCluster starts the primary and its synchronous standby, waits until
// the standby streams as 'sync', and stops and removes both when t ends.
func newPGCluster(t testing.TB) *pgCluster {
	t.Helper()
	c := &pgCluster{bin: pgBinDir()}
	if c.bin == "" {
		t.Skip("PostgreSQL server binaries (initdb, pg_ctl, pg_basebackup, postgres) not found in /usr/lib/postgresql/*/bin or on PATH")
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") && !strings.HasPrefix(kv, "HOME=") {
			c.env = append(c.env, kv)
		}
	}
	uid, gid := -1, -1
	if os.Geteuid() == 0 {
		// initdb and postgres refuse to run as root.
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Skipf("running as root and there is no postgres OS user to run PostgreSQL as: %v", err)
		}
		uid, _ = strconv.Atoi(u.Uid)
		gid, _ = strconv.Atoi(u.Gid)
		c.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	base := ""
	if c.cred != nil && !pgReachable(filepath.Join(os.TempDir(), "x")) {
		base = "/tmp"
	}
	root, err := os.MkdirTemp(base, "hostmint-pg-")
	if err != nil {
		t.Fatal(err)
	}
	if c.cred != nil {
		if err := os.Chown(root, uid, gid); err != nil {
			t.Fatal(err)
		}
		if !pgReachable(root) {
			t.Fatalf("%s: the postgres user cannot reach it", root)
		}
	}
	c.root = root
	// HOME is where libpq looks for .pgpass, and pg_basebackup -R writes
	// that path into the standby's primary_conninfo: keep it ours.
	c.env = append(c.env, "HOME="+root)
	// One cleanup for everything, registered before anything starts, so a
	// failure half-way through newPGCluster still stops what did start.
	t.Cleanup(func() {
		for _, n := range []*pgNode{c.standby, c.primary} {
			if n == nil {
				continue
			}
			if err := c.stop(n); err != nil {
				t.Errorf("stopping the %s: %v", n.name, err)
			}
			if t.Failed() {
				t.Logf("%s log (%s):\n%s", n.name, n.log, n.logTail())
			}
		}
		os.RemoveAll(root)
	})

	c.primary = &pgNode{name: "primary", dir: filepath.Join(root, "primary"), port: freePort(t), log: filepath.Join(root, "primary.log")}
	c.standby = &pgNode{name: "standby", dir: filepath.Join(root, "standby"), port: freePort(t), log: filepath.Join(root, "standby.log")}

	// --auth=trust also covers replication connections from 127.0.0.1;
	// -U postgres names the superuser the DSNs use whoever runs the test.
	c.run(t, time.Minute, "initdb", "-D", c.primary.dir, "-U", "postgres", "--auth=trust",
		"--no-locale", "-E", "UTF8", "--no-sync")
	pgAppend(t, filepath.Join(c.primary.dir, "postgresql.conf"), fmt.Sprintf(`
# hostmint e2e: a primary with one synchronous standby
listen_addresses = '127.0.0.1'
port = %d
unix_socket_directories = ''    # TCP only: keep clear of the system server's socket directory
wal_level = replica
max_wal_senders = 5
max_replication_slots = 5
hot_standby = on
synchronous_commit = on         # a commit waits until the standby has flushed it...
synchronous_standby_names = '%s' # ...this standby
# A killed postmaster is not a crashed machine: the OS still writes out what
# it was given, so skipping fsync loses nothing the failover tests rely on.
fsync = off
`, c.primary.port, pgStandbyName))
	c.start(t, c.primary)

	// -R writes standby.signal and primary_conninfo (carrying the
	// application_name synchronous_standby_names waits for); -C -S gives
	// the standby a slot, so the primary keeps the WAL it has not received.
	c.run(t, time.Minute, "pg_basebackup", "-D", c.standby.dir,
		"-d", fmt.Sprintf("host=127.0.0.1 port=%d user=postgres application_name=%s", c.primary.port, pgStandbyName),
		"-R", "-C", "-S", pgStandbyName, "-X", "stream", "--checkpoint=fast", "--no-sync")
	// The base backup copied the primary's postgresql.conf, and with it
	// synchronous_standby_names: left there, the promoted standby - which
	// has no standby of its own - would make every commit wait forever.
	// postgresql.auto.conf is read last, so these override it.
	pgAppend(t, filepath.Join(c.standby.dir, "postgresql.auto.conf"), fmt.Sprintf(`
# hostmint e2e: the standby
port = %d
synchronous_standby_names = ''
hot_standby_feedback = on
`, c.standby.port))
	c.start(t, c.standby)

	pgWait(t, 30*time.Second, "the standby streaming synchronously", func() (bool, error) {
		var state string
		err := c.queryRow(c.primaryDSN("postgres"), `SELECT sync_state FROM pg_stat_replication
			WHERE application_name = $1 AND state = 'streaming'`, []any{pgStandbyName}, &state)
		if errors.Is(err, sql.ErrNoRows) {
			return false, nil
		}
		return state == "sync", err
	}, c.primary, c.standby)
	return c
}

// pgAppend adds lines to a configuration file, appending so the file keeps
// its owner (postgres) and mode.
func pgAppend(t testing.TB, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// command runs a PostgreSQL binary as the user PostgreSQL must run as,
// from a directory that user can enter.
func (c *pgCluster) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(c.bin, name), args...)
	cmd.Dir, cmd.Env = c.root, c.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	return cmd
}

// runErr is run for cleanups, which must go on after a failure.
func (c *pgCluster) runErr(d time.Duration, name string, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if out, err := c.command(ctx, name, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return nil
}

// run fails the test on a tool's failure, with the tool's output.
func (c *pgCluster) run(t testing.TB, d time.Duration, name string, args ...string) {
	t.Helper()
	if err := c.runErr(d, name, args...); err != nil {
		t.Fatal(err)
	}
}

// start runs the postmaster on a thread locked for its lifetime: the parent
// death signal is tied to the starting thread, and this way it fires only
// if the test process itself goes away (a panic, a -timeout), taking the
// server down with an immediate shutdown (SIGQUIT) rather than leaving it.
func (c *pgCluster) start(t testing.TB, n *pgNode) {
	t.Helper()
	logf, err := os.OpenFile(n.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	n.done = make(chan struct{})
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine, after the postmaster
		defer close(n.done)
		cmd := c.command(context.Background(), "postgres", "-D", n.dir)
		cmd.Stdout, cmd.Stderr = logf, logf
		cmd.SysProcAttr.Pdeathsig = syscall.SIGQUIT
		cmd.SysProcAttr.Setpgid = true // a ^C to the test's process group is not also a fast shutdown
		if err := cmd.Start(); err != nil {
			n.err = err
			started <- err
			return
		}
		started <- nil
		n.err = cmd.Wait()
	}()
	if err := <-started; err != nil {
		t.Fatalf("starting the %s: %v", n.name, err)
	}
	pgWait(t, 30*time.Second, "the "+n.name+" accepting connections", func() (bool, error) {
		var one int
		err := c.queryRow(n.dsn("postgres"), "SELECT 1", nil, &one)
		return err == nil, err
	}, n)
}

// stop is idempotent, for the cleanup after killPrimary.
func (c *pgCluster) stop(n *pgNode) error {
	if n.done == nil {
		return nil
	}
	select {
	case <-n.done:
		return nil
	default:
	}
	err := c.runErr(30*time.Second, "pg_ctl", "stop", "-D", n.dir, "-m", "immediate", "-w", "-t", "20")
	select {
	case <-n.done:
	case <-time.After(20 * time.Second):
		return fmt.Errorf("the %s's postmaster did not exit (%v)", n.name, err)
	}
	return nil
}

func (n *pgNode) dsn(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", n.port, url.PathEscape(db))
}

// logTail is for failure messages: the server's own account is usually
// the only one of why it would not start or stream.
func (n *pgNode) logTail() string {
	b, _ := os.ReadFile(n.log)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 30 {
		lines = lines[len(lines)-30:]
	}
	return strings.Join(lines, "\n")
}

// primaryDSN is what a node that only ever writes to this primary uses.
func (c *pgCluster) primaryDSN(db string) string { return c.primary.dsn(db) }

// standbyDSN is for a read-only (DNS) node on the standby, which keeps
// that address when the standby becomes the primary.
func (c *pgCluster) standbyDSN(db string) string { return c.standby.dsn(db) }

// multiHostDSN is the DSN of a writer that must follow the failover by
// itself, as the README's runbook has it: lib/pq tries both hosts in order
// and keeps the writable one. It is quoted for a Corefile.
func (c *pgCluster) multiHostDSN(db string) string {
	return fmt.Sprintf(`"host=127.0.0.1,127.0.0.1 port=%d,%d user=postgres dbname=%s sslmode=disable target_session_attrs=read-write connect_timeout=2"`,
		c.primary.port, c.standby.port, db)
}

// queryRow opens its own connection so the helpers need no pool that
// would outlive the server it points at.
func (c *pgCluster) queryRow(dsn, query string, args []any, dest ...any) error {
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return db.QueryRowContext(ctx, query, args...).Scan(dest...)
}

// pgWait polls cond until it holds, failing with cond's last error and the
// logs of the nodes involved, and at once if one of them has exited.
func pgWait(t testing.TB, d time.Duration, what string, cond func() (bool, error), nodes ...*pgNode) {
	t.Helper()
	deadline := time.Now().Add(d)
	var logs strings.Builder
	fail := func(format string, args ...any) {
		for _, n := range nodes {
			fmt.Fprintf(&logs, "\n--- %s log (%s):\n%s", n.name, n.log, n.logTail())
		}
		t.Fatalf(format+"%s", append(args, logs.String())...)
	}
	for {
		ok, err := cond()
		if ok {
			return
		}
		for _, n := range nodes {
			select {
			case <-n.done:
				fail("waiting for %s: the %s exited (%v)", what, n.name, n.err)
			default:
			}
		}
		if time.Now().After(deadline) {
			fail("waiting for %s: gave up after %v (last error: %v)", what, d, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// createDB waits for the standby too, so a node started on standbyDSN(name)
// right afterwards finds its database.
func (c *pgCluster) createDB(t testing.TB, name string) {
	t.Helper()
	db, err := sql.Open("postgres", c.primaryDSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE DATABASE " + pq.QuoteIdentifier(name)); err != nil {
		t.Fatalf("CREATE DATABASE %s: %v", name, err)
	}
	pgWait(t, 10*time.Second, "database "+name+" on the standby", func() (bool, error) {
		var n int
		err := c.queryRow(c.standbyDSN("postgres"), "SELECT count(*) FROM pg_database WHERE datname = $1", []any{name}, &n)
		return n == 1, err
	}, c.standby)
}

// killPrimary is the primary's sudden death: no shutdown checkpoint, no
// goodbye to the standby, clients cut off mid-connection.
func (c *pgCluster) killPrimary(t testing.TB) {
	t.Helper()
	if err := c.stop(c.primary); err != nil {
		t.Fatal(err)
	}
}

// promote returns only once the standby takes writes, as a failover test
// wants before it expects writers to come back.
func (c *pgCluster) promote(t testing.TB) {
	t.Helper()
	c.run(t, time.Minute, "pg_ctl", "promote", "-D", c.standby.dir, "-w", "-t", "30")
	pgWait(t, 30*time.Second, "the promoted standby leaving recovery", func() (bool, error) {
		var inRecovery bool
		err := c.queryRow(c.standbyDSN("postgres"), "SELECT pg_is_in_recovery()", nil, &inRecovery)
		return err == nil && !inRecovery, err
	}, c.standby)
}

// waitStandbyCaughtUp is for reads on the standby: synchronous_commit=on
// waits for the standby to flush a commit, not to replay it, so a read
// right after a write can still miss it there.
func (c *pgCluster) waitStandbyCaughtUp(t testing.TB) {
	t.Helper()
	var lsn string
	if err := c.queryRow(c.primaryDSN("postgres"), "SELECT pg_current_wal_lsn()::text", nil, &lsn); err != nil {
		t.Fatalf("the primary's WAL position: %v", err)
	}
	pgWait(t, time.Minute, "the standby replaying up to "+lsn, func() (bool, error) {
		var caught bool
		err := c.queryRow(c.standbyDSN("postgres"),
			"SELECT coalesce(pg_last_wal_replay_lsn() >= $1::pg_lsn, false)", []any{lsn}, &caught)
		return caught, err
	}, c.primary, c.standby)
}

// The cluster the failover tests stand on does what they assume: the
// standby serves reads and refuses writes, a commit the primary
// acknowledged survives its sudden death, the promoted standby takes
// writes, and the multi-host DSN finds whichever one is writable.
func TestPGCluster(t *testing.T) {
	t.Parallel()
	c := newPGCluster(t)
	c.createDB(t, "pgc")
	primary := openSQL(t, storage.Postgres, c.primaryDSN("pgc"))
	standby := openSQL(t, storage.Postgres, c.standbyDSN("pgc"))
	writer := openSQL(t, storage.Postgres, strings.Trim(c.multiHostDSN("pgc"), `"`))
	writerPort := func() int {
		t.Helper()
		var port int
		if err := writer.QueryRow("SELECT inet_server_port()").Scan(&port); err != nil {
			t.Fatalf("through the multi-host DSN: %v", err)
		}
		return port
	}
	// Each check gets a connection of its own, as a writer reconnecting would.
	writer.SetMaxIdleConns(0)

	if _, err := primary.Exec("CREATE TABLE t (id int PRIMARY KEY, v text NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	if _, err := primary.Exec("INSERT INTO t VALUES (1, 'one')"); err != nil {
		t.Fatal(err)
	}
	c.waitStandbyCaughtUp(t)
	var v string
	if err := standby.QueryRow("SELECT v FROM t WHERE id = 1").Scan(&v); err != nil || v != "one" {
		t.Fatalf("the row on the standby: %q, %v", v, err)
	}
	_, err := standby.Exec("INSERT INTO t VALUES (2, 'two')")
	if pq.As(err, pqerror.ReadOnlySQLTransaction) == nil {
		t.Fatalf("a write on the standby: %v, want a read-only error", err)
	}
	if p := writerPort(); p != c.primary.port {
		t.Errorf("the multi-host DSN reached port %d, want the primary's %d", p, c.primary.port)
	}

	// Acknowledged, then at once the primary dies: synchronous commit means
	// the row is already on the standby, with no waiting for it.
	if _, err := primary.Exec("INSERT INTO t VALUES (3, 'three')"); err != nil {
		t.Fatal(err)
	}
	c.killPrimary(t)
	if err := primary.Ping(); err == nil {
		t.Error("the killed primary still answers")
	}
	c.promote(t)

	if _, err := standby.Exec("INSERT INTO t VALUES (4, 'four')"); err != nil {
		t.Fatalf("a write on the promoted standby: %v", err)
	}
	var ids string
	if err := standby.QueryRow("SELECT string_agg(id::text, ',' ORDER BY id) FROM t").Scan(&ids); err != nil || ids != "1,3,4" {
		t.Errorf("rows on the promoted standby: %q, %v; want 1,3,4", ids, err)
	}
	if p := writerPort(); p != c.standby.port {
		t.Errorf("after the failover the multi-host DSN reached port %d, want the promoted standby's %d", p, c.standby.port)
	}
}

// seedNames bulk-loads n live names <prefix>1 ... <prefix>n.example.org
// of account on the primary, as an import would (a test of what reads
// them should not wait for the API to write them); name i answers
// 11.<i's three low octets>.
func (c *pgCluster) seedNames(t testing.TB, db, account, prefix string, n int) {
	t.Helper()
	conn, err := sql.Open("postgres", c.primaryDSN(db))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	now := time.Now().UnixMilli()
	if _, err := conn.Exec(`INSERT INTO hostnames (id, account_id, domain_id, label, name, ip, addrs, class, certificate, status, created_at, updated_at, expires_at)
		SELECT 'h_' || $1 || g, $2, d.id, $1 || g, $1 || g || '.example.org', a, a, 'public', 'self', 'live', $3, $3, $4
		FROM generate_series(1, $5) g, (SELECT id FROM domains WHERE name = 'example.org') d,
			LATERAL (SELECT '11.' || (g >> 16 & 255) || '.' || (g >> 8 & 255) || '.' || (g & 255) AS a) x`,
		prefix, account, now, now+30*24*3600*1000, n); err != nil {
		t.Fatal(err)
	}
}

// seededAddr is the address seedNames gives name i.
func seededAddr(i int) string { return fmt.Sprintf("11.%d.%d.%d", i>>16&255, i>>8&255, i&255) }
