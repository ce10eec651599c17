package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/hostmint/hostmint/client"
)

// globals are the flags every API command takes, before or after it.
type globals struct {
	server, tokenFile string
	json              bool
	tokenFileSet      bool // -token-file was given: it wins over HOSTMINT_TOKEN
}

const (
	defaultServer    = "http://127.0.0.1:8080"
	defaultTokenFile = "./data/admin.token"
)

func (g *globals) register(fs *flag.FlagSet) {
	fs.StringVar(&g.server, "server", g.server, "the API's URL")
	fs.Func("token-file", "the admin token's file", func(s string) error {
		g.tokenFile, g.tokenFileSet = s, true
		return nil
	})
	fs.BoolVar(&g.json, "json", g.json, "print the API's JSON")
}

// parseGlobals reads the global flags before the command, with the
// environment's defaults under them.
func parseGlobals(args []string, stderr io.Writer) (*globals, []string, error) {
	g := &globals{server: envOr("HOSTMINT_SERVER", defaultServer), tokenFile: envOr("HOSTMINT_TOKEN_FILE", defaultTokenFile)}
	fs := flag.NewFlagSet("hostmint", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	g.register(fs)
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	return g, fs.Args(), nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// token is the admin token: -token-file, else HOSTMINT_TOKEN, else the
// file HOSTMINT_TOKEN_FILE names or the default, ./data/admin.token (the
// `make run` layout).
func (g *globals) token() (string, error) {
	if t := os.Getenv("HOSTMINT_TOKEN"); t != "" && !g.tokenFileSet {
		return strings.TrimSpace(t), nil
	}
	b, err := os.ReadFile(g.tokenFile)
	if err != nil {
		return "", fmt.Errorf("no admin token: %w (set -token-file, HOSTMINT_TOKEN_FILE or HOSTMINT_TOKEN)", err)
	}
	t := strings.TrimSpace(string(b))
	if t == "" {
		return "", fmt.Errorf("no admin token: %s is empty", g.tokenFile)
	}
	return t, nil
}

// parseInterleaved parses flags wherever they stand among the
// positional arguments, which it returns in order.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// call is one command's run: the client, where to print, and how.
type call struct {
	ctx    context.Context
	c      *client.Client
	out    io.Writer
	json   bool
	answer []byte // the last answer's body, for -json
}

// printJSON prints the last answer as the API gave it, indented.
func (c *call) printJSON() {
	var b bytes.Buffer
	if json.Indent(&b, c.answer, "", "  ") != nil {
		b.Reset()
		b.Write(c.answer)
	}
	b.WriteByte('\n')
	c.out.Write(b.Bytes())
}

// apiCommand runs one of the commands over the API.
func apiCommand(ctx context.Context, g *globals, groupName string, args []string, stdout, stderr io.Writer) int {
	group := commands[groupName]
	name := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	cmd, ok := group[name]
	if !ok {
		fmt.Fprintf(stderr, "hostmint %s: unknown command %q; usage:\n", groupName, name)
		for _, n := range slices.Sorted(maps.Keys(group)) {
			fmt.Fprintf(stderr, "  hostmint %s\n", group[n].use)
		}
		return exitRefuse
	}
	fs := flag.NewFlagSet(cmd.use, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintf(stderr, "usage: hostmint %s\n", cmd.use) }
	g.register(fs)
	vals := cmd.flags(fs)
	pos, err := parseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return 0 // -h: the command's usage is printed
	}
	if err != nil {
		return exitRefuse
	}
	if len(pos) < cmd.min || len(pos) > cmd.max {
		fmt.Fprintf(stderr, "usage: hostmint %s\n", cmd.use)
		return exitRefuse
	}
	tok, err := g.token()
	if err != nil {
		fmt.Fprintf(stderr, "hostmint: %v\n", err)
		return exitRefuse
	}
	cl := client.New(g.server, tok)
	run := &call{ctx: ctx, c: cl, out: stdout, json: g.json}
	cl.Answer = func(b []byte) { run.answer = b }
	if err := cmd.run(run, pos, vals); err != nil {
		return failed(g, err, stderr)
	}
	return 0
}

// failed says why a command did not happen, and picks the exit code: a
// refusal (4xx) changed nothing.
func failed(g *globals, err error, stderr io.Writer) int {
	var apiErr *client.Error
	switch {
	case errors.As(err, &apiErr) && apiErr.Status == 401:
		fmt.Fprintf(stderr, "hostmint: %s refused the admin token (%s): use the token of this server's admin_token_file "+
			"(-token-file, HOSTMINT_TOKEN_FILE or HOSTMINT_TOKEN)\n", g.server, apiErr.Code)
		return exitRefuse
	case errors.As(err, &apiErr) && apiErr.Status < 500:
		fmt.Fprintf(stderr, "hostmint: %s (%s)\n", apiErr.Message, apiErr.Code)
		return exitRefuse
	case errors.As(err, &apiErr):
		fmt.Fprintf(stderr, "hostmint: the server failed: %s (%s)\n", apiErr.Message, apiErr.Code)
	case errors.Is(err, client.ErrUnreachable):
		fmt.Fprintf(stderr, "hostmint: %v\n  is the server running? the API's address is -server or HOSTMINT_SERVER\n", err)
	default:
		fmt.Fprintf(stderr, "hostmint: %v\n", err)
	}
	return exitFail
}
