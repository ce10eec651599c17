// Command hostmint is the operator's tool beside the server (bin/coredns).
// Most commands drive the admin API over HTTP, never the database: the
// server's rules answer, as they do for curl or the dashboard. Two work on
// a store itself: migrate moves one between SQLite and PostgreSQL (or
// imports an acme-dns server's registrations), backup copies a SQLite
// store while it is in use.
//
//	hostmint accounts list
//	hostmint accounts create "Example Ltd" --plan pro
//	hostmint hostnames find 198.51.100.7
//	hostmint migrate -from sqlite:data/hostmint.db -to postgres://user@host/db
//	hostmint backup -from sqlite:data/hostmint.db -to backup.db
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Exit codes: 2 is a refusal (bad usage, an API refusal, a non-empty
// target) that changed nothing, 1 a failure.
const (
	exitFail   = 1
	exitRefuse = 2
)

const usage = `usage: hostmint [-server URL] [-token-file PATH] [-json] COMMAND

Commands over the admin API (the server must be running):
  accounts list [--name NAME] [--status STATUS] [--limit N] [--cursor C]
  accounts show ID
  accounts create NAME --plan PLAN [--cap N]
  accounts suspend ID | restore ID | close ID
  keys create ACCOUNT [--name NAME]     an API key (shown once)
  keys list ACCOUNT | keys revoke KEY_ID
  tsig-keys create ACCOUNT [--name NAME] [--algorithm hmac-sha256|hmac-sha512]
  tsig-keys list ACCOUNT | tsig-keys revoke KEY_ID
  domains list
  domains add NAME [--account ID]
  hostnames find NAME-OR-IP | hostnames find --account ID   [--limit N] [--cursor C]
  audit [--account ID] [--actor A] [--action A] [--result R] [--limit N] [--cursor N]
  health

Commands on a store:
  migrate -from STORE -to STORE           copy every row into an empty store
  migrate -from acme-dns:STORE -to STORE -acme-dns-domain NAME
                                          add an acme-dns server's registrations to a store
  backup -from sqlite:PATH -to FILE       online backup of a SQLite store

Global flags (before or after the command):
  -server URL        the API (env HOSTMINT_SERVER; default http://127.0.0.1:8080)
  -token-file PATH   the admin token's file (env HOSTMINT_TOKEN_FILE; default ./data/admin.token);
                     env HOSTMINT_TOKEN gives the token itself
  -json              print the API's JSON instead of a table

STORE is sqlite:PATH or a PostgreSQL URL (postgres://user@host:port/db?sslmode=disable).
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	g, args, err := parseGlobals(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0 // -h: the usage is printed
	}
	if err != nil {
		return exitRefuse
	}
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
	if _, ok := commands[args[0]]; ok {
		return apiCommand(ctx, g, args[0], args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "hostmint: unknown command %q\n%s", args[0], usage)
	return exitRefuse
}
