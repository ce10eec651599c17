package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hostmint/hostmint/acmedns"
	"github.com/hostmint/hostmint/domains"
	"github.com/hostmint/hostmint/storage"
)

// The commands that work on a store itself rather than through the API:
// migrate and backup.

// parseStore splits a STORE argument into a dialect and the DSN storage.Open takes.
func parseStore(s string) (storage.Dialect, string, error) {
	switch {
	case strings.HasPrefix(s, "sqlite:"):
		if p := strings.TrimPrefix(s, "sqlite:"); p != "" {
			return storage.SQLite, p, nil
		}
	case strings.HasPrefix(s, "postgres://"), strings.HasPrefix(s, "postgresql://"):
		return storage.Postgres, s, nil
	}
	return "", "", fmt.Errorf("store %q: want sqlite:PATH or postgres://...", s)
}

func flags(name string, args []string, stderr io.Writer) (from, to string, ok bool) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&from, "from", "", "source store")
	fs.StringVar(&to, "to", "", "target")
	if name == "migrate" {
		fs.StringVar(&acmeDNSDomain, "acme-dns-domain", "", "the acme-dns server's domain (-from acme-dns:STORE)")
	}
	if err := fs.Parse(args); err != nil {
		return "", "", false
	}
	if from == "" || to == "" || fs.NArg() > 0 {
		fmt.Fprintf(stderr, "hostmint %s: -from and -to are required\n%s", name, usage)
		return "", "", false
	}
	return from, to, true
}

func open(ctx context.Context, arg string) (*storage.Store, error) {
	d, dsn, err := parseStore(arg)
	if err != nil {
		return nil, err
	}
	if d == storage.SQLite {
		// Open creates a missing file; a typo in the source must not
		// silently copy an empty store.
		if _, err := os.Stat(dsn); err != nil {
			return nil, err
		}
	}
	return storage.Open(ctx, d, dsn)
}

func migrate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fromArg, toArg, ok := flags("migrate", args, stderr)
	if !ok {
		return exitRefuse
	}
	if _, _, err := parseStore(toArg); err != nil {
		fmt.Fprintf(stderr, "hostmint migrate: %v\n", err)
		return exitRefuse
	}
	if src, ok := strings.CutPrefix(fromArg, "acme-dns:"); ok {
		return importACMEDNS(ctx, src, toArg, stdout, stderr)
	}
	from, err := open(ctx, fromArg)
	if err != nil {
		fmt.Fprintf(stderr, "hostmint migrate: source: %v\n", err)
		return exitFail
	}
	defer from.Close()
	// Open migrates the target's schema, so an empty database is enough.
	d, dsn, _ := parseStore(toArg)
	to, err := storage.Open(ctx, d, dsn)
	if err != nil {
		fmt.Fprintf(stderr, "hostmint migrate: target: %v\n", err)
		return exitFail
	}
	defer to.Close()
	pr := newProgress(stderr)
	counts, err := storage.CopyWith(ctx, from, to, storage.CopyOptions{Progress: pr.table})
	pr.end()
	if errors.Is(err, storage.ErrTargetNotEmpty) {
		fmt.Fprintf(stderr, "hostmint migrate: refusing: %v; nothing was copied (migrate into an empty database)\n", err)
		return exitRefuse
	}
	if counts != nil {
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "table\tsource\ttarget\t")
		for _, c := range counts {
			fmt.Fprintf(tw, "%s\t%d\t%d\t\n", c.Table, c.From, c.To)
		}
		tw.Flush()
	}
	if err != nil {
		what := "failed"
		if ctx.Err() != nil {
			what = "interrupted"
		}
		fmt.Fprintf(stderr, "hostmint migrate: %s: %v\n", what, err)
		if counts == nil {
			fmt.Fprintf(stderr, "hostmint migrate: %s\n", leftTarget(ctx, to))
		}
		return exitFail
	}
	took := time.Since(pr.start)
	fmt.Fprintf(stdout, "%d tables, %d rows in %s%s\n", pr.tables, pr.rows, seconds(took), rate(pr.rows, took))
	fmt.Fprintf(stdout, "copied %s store into %s store; counts match\n", from.Dialect(), to.Dialect())
	return 0
}

// leftTarget says what a failed copy left in the target. CopyWith rolls
// back all it wrote unless it committed, so the target should be empty; it
// is counted rather than assumed, on a context of its own, as ctx may be
// the cancelled one.
func leftTarget(ctx context.Context, to *storage.Store) string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	n, err := to.DataRows(ctx)
	switch {
	case err != nil:
		return fmt.Sprintf("the copy runs in one transaction, which was not committed, so the target should be as it was (empty); counting it failed: %v", err)
	case n == 0:
		return "nothing was committed: the target is left as it was (empty); run migrate again"
	}
	return fmt.Sprintf("the copy was committed (the target holds %d rows) but the counts were not compared: compare them before using it", n)
}

func backup(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fromArg, file, ok := flags("backup", args, stderr)
	if !ok {
		return exitRefuse
	}
	if d, _, err := parseStore(fromArg); err != nil || d != storage.SQLite {
		fmt.Fprintf(stderr, "hostmint backup: -from must be sqlite:PATH (back up PostgreSQL with pg_dump)\n")
		return exitRefuse
	}
	from, err := open(ctx, fromArg)
	if err != nil {
		fmt.Fprintf(stderr, "hostmint backup: %v\n", err)
		return exitFail
	}
	defer from.Close()
	pr := newProgress(stderr)
	var size int64
	err = from.BackupWith(ctx, file, storage.BackupOptions{Progress: func(p storage.BackupProgress) {
		size = p.Written
		pr.backup(p)
	}})
	pr.end()
	if err != nil {
		what := "failed"
		if ctx.Err() != nil {
			what = "interrupted"
		}
		fmt.Fprintf(stderr, "hostmint backup: %s: %v\n", what, err)
		fmt.Fprintf(stderr, "hostmint backup: no backup was made; nothing partial is left beside %s\n", file)
		return exitFail
	}
	fmt.Fprintf(stdout, "backed up to %s: %s in %s\n", file, bytesize(size), seconds(time.Since(pr.start)))
	return 0
}

// acmeDNSDomain is migrate's -acme-dns-domain.
var acmeDNSDomain string

// importACMEDNS adds the registrations of the acme-dns database src to the
// Hostmint store to (which may be in use).
func importACMEDNS(ctx context.Context, src, toArg string, stdout, stderr io.Writer) int {
	domain := domains.Normalize(acmeDNSDomain)
	if domain == "" {
		fmt.Fprintf(stderr, "hostmint migrate: -acme-dns-domain NAME is required with -from acme-dns:STORE: "+
			"the acme-dns server's domain, which the Corefile's acme_dns_domain must name\n")
		return exitRefuse
	}
	d, dsn, err := parseStore(src)
	if err != nil {
		fmt.Fprintf(stderr, "hostmint migrate: acme-dns source: %v\n", err)
		return exitRefuse
	}
	regs, err := acmedns.Read(ctx, d, dsn, domain, time.Now().UnixMilli())
	if err != nil {
		fmt.Fprintf(stderr, "hostmint migrate: acme-dns source: %v\n", err)
		return exitFail
	}
	td, tdsn, _ := parseStore(toArg)
	to, err := storage.Open(ctx, td, tdsn)
	if err != nil {
		fmt.Fprintf(stderr, "hostmint migrate: target: %v\n", err)
		return exitFail
	}
	defer to.Close()
	n, err := to.ImportRegistrations(ctx, regs)
	if err != nil {
		fmt.Fprintf(stderr, "hostmint migrate: nothing was imported: %v\n", err)
		return exitFail
	}
	fmt.Fprintf(stdout, "imported %d of %d acme-dns registrations under %s (%d held already)\n", n, len(regs), domain, len(regs)-n)
	if n > 0 {
		fmt.Fprintf(stdout, "serve them with acme_dns_domain %s in the hostname block\n", domain)
	}
	return 0
}

// progressEvery bounds how often a terminal's progress line is redrawn.
const progressEvery = 250 * time.Millisecond

// progress shows a long command's progress on w (stderr). On a terminal a
// line is redrawn in place (\r) as the work goes; on a terminal or not,
// each table copied leaves one line, so a log shows where time went.
type progress struct {
	w      io.Writer
	tty    bool
	start  time.Time
	now    func() time.Time
	drawn  time.Time // when the line in place was last redrawn
	open   bool      // a line in place is on screen, not yet ended
	tables int       // tables copied
	rows   int64     // rows copied, over all tables
}

func newProgress(w io.Writer) *progress {
	return &progress{w: w, tty: isTerminal(w), start: time.Now(), now: time.Now}
}

// isTerminal reports whether w is a character device: a terminal, where
// \r redraws a line, rather than a file or pipe, where it would litter it.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// table is CopyWith's progress hook.
func (p *progress) table(t storage.TableProgress) {
	head := fmt.Sprintf("[%2d/%d] %-18s", t.N, t.Of, t.Table)
	if t.Done {
		p.tables++
		p.rows += t.Rows
		p.line(fmt.Sprintf("%s %9d rows in %s%s", head, t.Rows, seconds(t.Elapsed), rate(t.Rows, t.Elapsed)), true)
		return
	}
	pct := 100
	if t.Total > 0 {
		pct = int(100 * t.Rows / t.Total)
	}
	p.line(fmt.Sprintf("%s %9d of %d rows (%d%%) in %s%s", head, t.Rows, t.Total, pct, seconds(t.Elapsed), rate(t.Rows, t.Elapsed)), false)
}

// backup is BackupWith's progress hook: the summary says when it is done.
func (p *progress) backup(b storage.BackupProgress) {
	if b.Done {
		return
	}
	// The estimate is the source's pages in use; the compacted copy may
	// come out smaller, so the figure never claims to be finished.
	pct := 99
	if b.Estimate > 0 {
		pct = min(99, int(100*b.Written/b.Estimate))
	}
	p.line(fmt.Sprintf("backup: %s of about %s (%d%%) %s", bytesize(b.Written), bytesize(b.Estimate), pct, seconds(b.Elapsed)), false)
}

// line shows s: kept as a line of its own if final, else redrawn in place
// on a terminal (at most every progressEvery) and not shown elsewhere.
func (p *progress) line(s string, final bool) {
	if !final && (!p.tty || p.now().Sub(p.drawn) < progressEvery) {
		return
	}
	if p.tty {
		// \x1b[K clears what a longer line before left to the right.
		fmt.Fprintf(p.w, "\r%s\x1b[K", s)
		p.drawn, p.open = p.now(), true
	} else {
		fmt.Fprint(p.w, s)
	}
	if final {
		fmt.Fprintln(p.w)
		p.open = false
	}
}

// end ends a line left in place, so that what is printed next starts on
// a line of its own.
func (p *progress) end() {
	if p.open {
		fmt.Fprintln(p.w)
		p.open = false
	}
}

func seconds(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return fmt.Sprintf("%.1fs", d.Seconds())
}

// rate is " (N rows/s)", or "" with nothing to divide.
func rate(rows int64, d time.Duration) string {
	if rows == 0 || d <= 0 {
		return ""
	}
	return fmt.Sprintf(" (%.0f rows/s)", float64(rows)/d.Seconds())
}

func bytesize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 3; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGT"[exp])
}
