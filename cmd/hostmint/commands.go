package main

import (
	"flag"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/hostmint/hostmint/client"
)

// command is one API command: its usage, how many positional arguments
// it takes, its own flags, and what it does.
type command struct {
	use      string
	min, max int
	flags    func(fs *flag.FlagSet) *opts
	run      func(c *call, pos []string, o *opts) error
}

// opts are the values of a command's own flags.
type opts struct {
	name, status, cursor, plan, account, algorithm string
	actor, action, result                          string
	limit, cap                                     int
	auditCursor                                    int64
	capSet                                         bool
}

func none(*flag.FlagSet) *opts { return &opts{} }

func paged(fs *flag.FlagSet, o *opts) {
	fs.IntVar(&o.limit, "limit", 0, "page size (1..500; default the API's, 100)")
	fs.StringVar(&o.cursor, "cursor", "", "the next page's cursor, as the previous page printed it")
}

// commands are the API commands by group and name ("" when the group is
// the command).
var commands = map[string]map[string]*command{
	"accounts": {
		"list": {use: "accounts list [--name NAME] [--status active|suspended|ended|closed] [--limit N] [--cursor C]", max: 0,
			flags: func(fs *flag.FlagSet) *opts {
				o := &opts{}
				fs.StringVar(&o.name, "name", "", "only accounts with exactly this name")
				fs.StringVar(&o.status, "status", "", "only accounts in this state")
				paged(fs, o)
				return o
			},
			run: func(c *call, _ []string, o *opts) error {
				l, err := c.c.ListAccounts(c.ctx, client.AccountQuery{Name: o.name, Status: o.status, Cursor: o.cursor, Limit: o.limit})
				if err == nil {
					c.accounts(l, "accounts list"+again("name", o.name, "status", o.status, "limit", itoa(o.limit)))
				}
				return err
			}},
		"show": {use: "accounts show ID", min: 1, max: 1, flags: none,
			run: func(c *call, pos []string, _ *opts) error {
				a, err := c.c.Account(c.ctx, pos[0])
				if err == nil {
					c.account(a)
				}
				return err
			}},
		"create": {use: "accounts create NAME --plan PLAN [--cap N]", min: 1, max: 1,
			flags: func(fs *flag.FlagSet) *opts {
				o := &opts{}
				fs.StringVar(&o.plan, "plan", "", "the plan ([P1] free, pro or business; [P2] any name)")
				fs.Func("cap", "maximum active hostnames (default: the plan's)", func(s string) error {
					o.capSet = true
					_, err := fmt.Sscan(s, &o.cap)
					return err
				})
				return o
			},
			run: func(c *call, pos []string, o *opts) error {
				in := client.AccountInput{Name: &pos[0]}
				if o.plan != "" {
					in.Plan = &o.plan
				}
				if o.capSet {
					in.Cap = &o.cap
				}
				a, err := c.c.CreateAccount(c.ctx, in)
				if err == nil {
					c.account(a)
				}
				return err
			}},
		"suspend": {use: "accounts suspend ID", min: 1, max: 1, flags: none,
			run: func(c *call, pos []string, _ *opts) error { return c.setStatus(pos[0], "suspended") }},
		"restore": {use: "accounts restore ID", min: 1, max: 1, flags: none,
			run: func(c *call, pos []string, _ *opts) error { return c.setStatus(pos[0], "active") }},
		"close": {use: "accounts close ID", min: 1, max: 1, flags: none,
			run: func(c *call, pos []string, _ *opts) error {
				r, err := c.c.CloseAccount(c.ctx, pos[0])
				if err == nil {
					c.closed(pos[0], r)
				}
				return err
			}},
	},
	"keys": {
		"create": {use: "keys create ACCOUNT [--name NAME]", min: 1, max: 1, flags: named,
			run: func(c *call, pos []string, o *opts) error {
				k, err := c.c.CreateKey(c.ctx, pos[0], client.KeyInput{Name: o.name})
				if err == nil {
					c.newKey(k)
				}
				return err
			}},
		"list": {use: "keys list ACCOUNT", min: 1, max: 1, flags: none,
			run: func(c *call, pos []string, _ *opts) error {
				l, err := c.c.Keys(c.ctx, pos[0])
				if err == nil {
					c.keys(l)
				}
				return err
			}},
		"revoke": {use: "keys revoke KEY_ID", min: 1, max: 1, flags: none,
			run: func(c *call, pos []string, _ *opts) error {
				err := c.c.RevokeKey(c.ctx, pos[0])
				if err == nil {
					c.done("key " + pos[0] + " revoked")
				}
				return err
			}},
	},
	"tsig-keys": {
		"create": {use: "tsig-keys create ACCOUNT [--name NAME] [--algorithm hmac-sha256|hmac-sha512]", min: 1, max: 1,
			flags: func(fs *flag.FlagSet) *opts {
				o := named(fs)
				fs.StringVar(&o.algorithm, "algorithm", "", "hmac-sha256 (default) or hmac-sha512")
				return o
			},
			run: func(c *call, pos []string, o *opts) error {
				k, err := c.c.CreateTSIGKey(c.ctx, pos[0], client.TSIGKeyInput{Name: o.name, Algorithm: o.algorithm})
				if err == nil {
					c.newTSIGKey(k)
				}
				return err
			}},
		"list": {use: "tsig-keys list ACCOUNT", min: 1, max: 1, flags: none,
			run: func(c *call, pos []string, _ *opts) error {
				l, err := c.c.TSIGKeys(c.ctx, pos[0])
				if err == nil {
					c.tsigKeys(l)
				}
				return err
			}},
		"revoke": {use: "tsig-keys revoke KEY_ID", min: 1, max: 1, flags: none,
			run: func(c *call, pos []string, _ *opts) error {
				err := c.c.RevokeTSIGKey(c.ctx, pos[0])
				if err == nil {
					c.done("TSIG key " + pos[0] + " revoked")
				}
				return err
			}},
	},
	"domains": {
		"list": {use: "domains list", flags: none,
			run: func(c *call, _ []string, _ *opts) error {
				l, err := c.c.Domains(c.ctx)
				if err == nil {
					c.domains(l.Domains)
				}
				return err
			}},
		"add": {use: "domains add NAME [--account ID]", min: 1, max: 1,
			flags: func(fs *flag.FlagSet) *opts {
				o := &opts{}
				fs.StringVar(&o.account, "account", "", "[P2] the team the domain is dedicated to")
				return o
			},
			run: func(c *call, pos []string, o *opts) error {
				d, err := c.c.CreateDomain(c.ctx, client.DomainInput{Name: pos[0], AccountID: o.account})
				if err == nil {
					c.domains([]client.Domain{*d})
				}
				return err
			}},
	},
	"hostnames": {
		"find": {use: "hostnames find NAME-OR-IP | hostnames find --account ID  [--limit N] [--cursor C]", max: 1,
			flags: func(fs *flag.FlagSet) *opts {
				o := &opts{}
				fs.StringVar(&o.account, "account", "", "the hostnames of this account")
				paged(fs, o)
				return o
			},
			run: func(c *call, pos []string, o *opts) error {
				q := client.HostnameQuery{AccountID: o.account, Cursor: o.cursor, Limit: o.limit}
				if len(pos) == 1 {
					if _, err := netip.ParseAddr(pos[0]); err == nil {
						q.IP = pos[0]
					} else {
						q.Hostname = pos[0]
					}
				}
				l, err := c.c.FindHostnames(c.ctx, q)
				if err == nil {
					what := "hostnames find" + again("account", o.account, "limit", itoa(o.limit))
					if len(pos) == 1 {
						what += " " + shellQuote(pos[0])
					}
					c.hostnames(l, what)
				}
				return err
			}},
	},
	"audit": {
		"": {use: "audit [--account ID] [--actor A] [--action A] [--result R] [--limit N] [--cursor N]",
			flags: func(fs *flag.FlagSet) *opts {
				o := &opts{}
				fs.StringVar(&o.account, "account", "", "writes acting for this account")
				fs.StringVar(&o.actor, "actor", "", "admin, key:<id>, acme:<username>, session:<account id>...")
				fs.StringVar(&o.action, "action", "", "a route, e.g. 'DELETE /api/admin/accounts/{id}'")
				fs.StringVar(&o.result, "result", "", "ok or an error code")
				fs.IntVar(&o.limit, "limit", 0, "page size (1..500; default 100)")
				fs.Int64Var(&o.auditCursor, "cursor", 0, "the next page's cursor, as the previous page printed it")
				return o
			},
			run: func(c *call, _ []string, o *opts) error {
				l, err := c.c.Audit(c.ctx, client.AuditQuery{AccountID: o.account, Actor: o.actor, Action: o.action,
					Result: o.result, Limit: o.limit, Cursor: o.auditCursor})
				if err == nil {
					c.audit(l)
				}
				return err
			}},
	},
	"health": {
		"": {use: "health", flags: none,
			run: func(c *call, _ []string, _ *opts) error {
				h, err := c.c.Health(c.ctx)
				if err == nil {
					c.health(h)
				}
				return err
			}},
	},
}

func named(fs *flag.FlagSet) *opts {
	o := &opts{}
	fs.StringVar(&o.name, "name", "", "a name to tell it by")
	return o
}

func (c *call) setStatus(id, status string) error {
	a, err := c.c.ChangeAccount(c.ctx, id, client.AccountInput{Status: &status})
	if err == nil {
		c.account(a)
	}
	return err
}

// again is the flags of a command as the line that asks for its next page
// repeats them: the non-empty pairs name, value...
func again(kv ...string) string {
	out := ""
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			out += " --" + kv[i] + " " + shellQuote(kv[i+1])
		}
	}
	return out
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:@/") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func itoa(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}
