package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/hostmint/hostmint/client"
)

// What the API commands print: a table for people, or with -json the
// API's answer as it came.

// table prints a header and rows, aligned.
func (c *call) table(header string, rows [][]string) {
	tw := tabwriter.NewWriter(c.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.ReplaceAll(header, " ", "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
}

// next says how to ask for the next page, when there is one.
func (c *call) next(cursor *string, again string) {
	if cursor != nil {
		fmt.Fprintf(c.out, "more: hostmint %s --cursor %s\n", again, *cursor)
	}
}

func orDash(s *string) string {
	if s == nil || *s == "" {
		return "-"
	}
	return *s
}

func (c *call) accounts(l *client.AccountList, again string) {
	if c.json {
		c.printJSON()
		return
	}
	rows := make([][]string, len(l.Accounts))
	for i, a := range l.Accounts {
		rows[i] = []string{a.ID, a.Name, a.Plan, a.Status, fmt.Sprint(a.Cap), a.CreatedAt}
	}
	c.table("ID NAME PLAN STATUS CAP CREATED", rows)
	c.next(l.NextCursor, again)
}

func (c *call) account(a *client.Account) {
	if c.json {
		c.printJSON()
		return
	}
	c.table("FIELD VALUE", [][]string{
		{"id", a.ID}, {"name", a.Name}, {"plan", a.Plan}, {"cap", fmt.Sprint(a.Cap)}, {"billing", fmt.Sprint(a.Billing)},
		{"status", a.Status}, {"plan_ends_at", orDash(a.PlanEndsAt)}, {"closed_at", orDash(a.ClosedAt)}, {"created_at", a.CreatedAt},
	})
}

func (c *call) closed(id string, r *client.Closed) {
	if c.json {
		c.printJSON()
		return
	}
	fmt.Fprintf(c.out, "account %s is closed: %d hostnames released, %d API keys and %d TSIG keys revoked, "+
		"%d sessions and %d sign-in links ended\n", id, r.HostnamesReleased, r.KeysRevoked, r.TSIGKeysRevoked, r.SessionsEnded, r.SigninLinksEnded)
}

func (c *call) newKey(k *client.Key) {
	if c.json {
		c.printJSON()
		return
	}
	fmt.Fprintf(c.out, "key %s (%s)\n%s\nThis is the only time the key is shown; the service keeps a hash.\n", k.ID, k.Name, k.Key)
}

func scopes(ss []client.Scope) string {
	var out []string
	for _, s := range ss {
		reach := ""
		switch {
		case s.Hostname != "":
			reach = "@" + s.Hostname
		case s.Domain != "":
			reach = "@" + s.Domain
		}
		out = append(out, s.Scope+reach)
	}
	return strings.Join(out, ",")
}

func (c *call) keys(l *client.KeyList) {
	if c.json {
		c.printJSON()
		return
	}
	rows := make([][]string, len(l.Keys))
	for i, k := range l.Keys {
		rows[i] = []string{k.ID, k.Name, scopes(k.Scopes), orDash(k.ExpiresAt), k.CreatedAt}
	}
	c.table("ID NAME SCOPES EXPIRES CREATED", rows)
}

func (c *call) newTSIGKey(k *client.TSIGKey) {
	if c.json {
		c.printJSON()
		return
	}
	fmt.Fprintf(c.out, "TSIG key %s (%s)\nkey name:  %s\nalgorithm: %s\nsecret:    %s\n"+
		"This is the only time the secret is shown. For nsupdate: key %s:%s %s\n",
		k.ID, k.Name, k.KeyName, k.Algorithm, k.Secret, k.Algorithm, k.KeyName, k.Secret)
}

func (c *call) tsigKeys(l *client.TSIGKeyList) {
	if c.json {
		c.printJSON()
		return
	}
	rows := make([][]string, len(l.TSIGKeys))
	for i, k := range l.TSIGKeys {
		rows[i] = []string{k.ID, k.Name, k.KeyName, k.Algorithm, scopes(k.Scopes), k.CreatedAt}
	}
	c.table("ID NAME KEY_NAME ALGORITHM SCOPES CREATED", rows)
}

func (c *call) domains(ds []client.Domain) {
	if c.json {
		c.printJSON()
		return
	}
	rows := make([][]string, len(ds))
	for i, d := range ds {
		rows[i] = []string{d.ID, d.Name, orDash(d.AccountID), d.Status, fmt.Sprint(d.DNSSEC), d.CreatedAt}
	}
	c.table("ID NAME ACCOUNT STATUS DNSSEC CREATED", rows)
}

func (c *call) hostnames(l *client.HostnameList, again string) {
	if c.json {
		c.printJSON()
		return
	}
	rows := make([][]string, len(l.Hostnames))
	for i, h := range l.Hostnames {
		rows[i] = []string{h.ID, h.Hostname, h.IP, h.Status, h.AccountID, h.CreatedAt}
	}
	c.table("ID HOSTNAME ADDRESS STATUS ACCOUNT CREATED", rows)
	c.next(l.NextCursor, again)
}

func (c *call) audit(l *client.AuditList) {
	if c.json {
		c.printJSON()
		return
	}
	rows := make([][]string, len(l.Entries))
	for i, e := range l.Entries {
		rows[i] = []string{e.At, e.Actor, e.Action, e.Object, e.Result, e.Address, e.Detail}
	}
	c.table("AT ACTOR ACTION OBJECT RESULT ADDRESS DETAIL", rows)
	if l.NextCursor != nil {
		fmt.Fprintf(c.out, "more: hostmint audit --cursor %d\n", *l.NextCursor)
	}
}

func (c *call) health(h client.Object) {
	if c.json {
		c.printJSON()
		return
	}
	fmt.Fprintf(c.out, "%v\n", h["status"])
}

func (c *call) done(what string) {
	if c.json {
		c.printJSON()
		return
	}
	fmt.Fprintln(c.out, what)
}
