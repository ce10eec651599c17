package e2e

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostmint/hostmint/client"
)

// The Go client against a running server, every method once, on both
// stores ([P2], which serves every admin route): what the hostmint
// command and other Go programs rely on.
func TestClient(t *testing.T) {
	eachDialect(t, options{profile: 2, extra: []string{certKeyFile(t), "acme_dns_domain " + acmeRegDomain}}, func(t *testing.T, s *server) {
		ctx := t.Context()
		tok, err := os.ReadFile(filepath.Join(s.dir, "admin.token"))
		if err != nil {
			t.Fatal(err)
		}
		c := client.New(s.api, strings.TrimSpace(string(tok)))
		must := func(what string, err error) {
			t.Helper()
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		}
		refused := func(what string, err error, status int, code string) {
			t.Helper()
			var e *client.Error
			if !errors.As(err, &e) || e.Status != status || e.Code != code {
				t.Errorf("%s: %v, want %d %s", what, err, status, code)
			}
		}

		h, err := c.Health(ctx)
		must("Health", err)
		if h["status"] != "ok" {
			t.Errorf("health %v", h)
		}
		name, plan := "Team A", "team"
		a, err := c.CreateAccount(ctx, client.AccountInput{Name: &name, Plan: &plan})
		must("CreateAccount", err)
		_, err = c.CreateAccount(ctx, client.AccountInput{Name: &name})
		refused("CreateAccount without a plan", err, 400, "BAD_REQUEST")
		l, err := c.ListAccounts(ctx, client.AccountQuery{Name: name})
		must("ListAccounts", err)
		if len(l.Accounts) != 1 || l.Accounts[0].ID != a.ID || l.NextCursor != nil {
			t.Errorf("ListAccounts %+v", l)
		}
		got, err := c.Account(ctx, a.ID)
		must("Account", err)
		if got.Name != name || got.Status != "active" {
			t.Errorf("Account %+v", got)
		}
		billing := false
		ch, err := c.ChangeAccount(ctx, a.ID, client.AccountInput{Billing: &billing})
		must("ChangeAccount", err)
		if ch.Billing {
			t.Errorf("ChangeAccount %+v", ch)
		}
		billing = true
		_, err = c.ChangeAccount(ctx, a.ID, client.AccountInput{Billing: &billing})
		must("ChangeAccount back", err)

		d, err := c.CreateDomain(ctx, client.DomainInput{Name: "team-a.example.net", AccountID: a.ID})
		must("CreateDomain", err)
		ds, err := c.Domains(ctx)
		must("Domains", err)
		if len(ds.Domains) < 2 {
			t.Errorf("Domains %+v", ds)
		}
		cd, err := c.ChangeDomain(ctx, d.ID, client.Object{"caa": []string{`0 issue "ca.example"`}})
		must("ChangeDomain", err)
		if len(cd.CAA) != 1 {
			t.Errorf("ChangeDomain %+v", cd)
		}

		k, err := c.CreateKey(ctx, a.ID, client.KeyInput{Name: "ci"})
		must("CreateKey", err)
		ks, err := c.Keys(ctx, a.ID)
		must("Keys", err)
		if len(ks.Keys) != 1 || ks.Keys[0].Key != "" {
			t.Errorf("Keys %+v", ks)
		}
		ts, err := c.CreateTSIGKey(ctx, a.ID, client.TSIGKeyInput{Name: "router"})
		must("CreateTSIGKey", err)
		if ts.Secret == "" {
			t.Errorf("CreateTSIGKey %+v", ts)
		}
		tl, err := c.TSIGKeys(ctx, a.ID)
		must("TSIGKeys", err)
		if len(tl.TSIGKeys) != 1 {
			t.Errorf("TSIGKeys %+v", tl)
		}
		must("RevokeTSIGKey", c.RevokeTSIGKey(ctx, ts.ID))

		link, err := c.CreateSigninLink(ctx, a.ID)
		must("CreateSigninLink", err)
		ta, err := c.TeamAccess(ctx, a.ID)
		must("TeamAccess", err)
		if len(ta["signin_links"].([]any)) != 1 {
			t.Errorf("TeamAccess %v", ta)
		}
		must("WithdrawSigninLink", c.WithdrawSigninLink(ctx, a.ID, link["id"].(string)))
		refused("EndSession of none", c.EndSession(ctx, a.ID, "none"), 404, "NOT_FOUND")
		_, err = c.EndTeamAccess(ctx, a.ID)
		must("EndTeamAccess", err)

		hn := s.must(201, "POST", "/api/v1/hostnames", k.Key, map[string]any{"ip": "198.41.0.40"})
		found, err := c.FindHostnames(ctx, client.HostnameQuery{IP: "198.41.0.40"})
		must("FindHostnames", err)
		if len(found.Hostnames) != 1 || found.Hostnames[0].AccountID != a.ID || found.Hostnames[0].Hostname != hn.str("hostname") {
			t.Errorf("FindHostnames %+v", found)
		}
		_, err = c.SuspendHostname(ctx, hn.str("id"))
		must("SuspendHostname", err)
		_, err = c.RestoreHostname(ctx, hn.str("id"))
		must("RestoreHostname", err)
		tr, err := c.TerminateHostname(ctx, hn.str("id"))
		must("TerminateHostname", err)
		if tr["status"] != "terminated" {
			t.Errorf("TerminateHostname %v", tr)
		}

		regs, err := c.Registrations(ctx, "", 10)
		must("Registrations", err)
		if _, ok := regs["registrations"]; !ok {
			t.Errorf("Registrations %v", regs)
		}
		refused("DeleteRegistration of none", c.DeleteRegistration(ctx, "none"), 404, "NOT_FOUND")

		audit, err := c.Audit(ctx, client.AuditQuery{Action: "POST /api/admin/accounts", Limit: 5})
		must("Audit", err)
		if len(audit.Entries) == 0 {
			t.Errorf("Audit %+v", audit)
		}
		must("RevokeKey", c.RevokeKey(ctx, k.ID))
		closed, err := c.CloseAccount(ctx, a.ID)
		must("CloseAccount", err)
		if !closed.Closed {
			t.Errorf("CloseAccount %+v", closed)
		}

		// A wrong token and an unreachable server, as the client tells them.
		_, err = client.New(s.api, "wrong-token-wrong-token").Domains(ctx)
		refused("a wrong token", err, 401, "UNAUTHORIZED")
		if _, err := client.New("http://127.0.0.1:1", "x").Domains(ctx); !errors.Is(err, client.ErrUnreachable) {
			t.Errorf("unreachable: %v", err)
		}
	})
}
