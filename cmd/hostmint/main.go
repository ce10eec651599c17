// Command hostmint is the admin CLI beside the server (bin/coredns): it
// moves a store between SQLite and PostgreSQL, imports an acme-dns server's
// registrations, and backs up a SQLite store.
// It holds no logic of its own; storage does the work.
//
//	hostmint migrate -from sqlite:data/hostmint.db -to postgres://user@host/db
//	hostmint migrate -from acme-dns:sqlite:/var/lib/acme-dns/acme-dns.db -to sqlite:data/hostmint.db -acme-dns-domain auth.example.org
//	hostmint backup -from sqlite:data/hostmint.db -to backup.db
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Exit codes: 2 is a refusal (bad usage, a non-empty target) that changed
// nothing, 1 a failure.
const (
	exitFail   = 1
	exitRefuse = 2
)

const usage = `usage:
  hostmint migrate -from STORE -to STORE   copy every row into an empty store
  hostmint migrate -from acme-dns:STORE -to STORE -acme-dns-domain NAME
                                           add an acme-dns server's registrations to a store
  hostmint backup -from sqlite:PATH -to FILE   online backup of a SQLite store

STORE is sqlite:PATH or a PostgreSQL URL (postgres://user@host:port/db?sslmode=disable).
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitRefuse
	}
	switch args[0] {
	case "migrate":
		return migrate(ctx, args[1:], stdout, stderr)
	case "backup":
		return backup(ctx, args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "hostmint: unknown command %q\n%s", args[0], usage)
	return exitRefuse
}
