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
	counts, err := storage.Copy(ctx, from, to)
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
		fmt.Fprintf(stderr, "hostmint migrate: %v\n", err)
		return exitFail
	}
	fmt.Fprintf(stdout, "copied %s store into %s store; counts match\n", from.Dialect(), to.Dialect())
	return 0
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
	if err := from.Backup(ctx, file); err != nil {
		fmt.Fprintf(stderr, "hostmint backup: %v\n", err)
		return exitFail
	}
	fmt.Fprintf(stdout, "backed up to %s\n", file)
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
