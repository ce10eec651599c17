package dnsupdate_test

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/hostmint/hostmint/accounts"
	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/hostnames"
	"github.com/hostmint/hostmint/storage"
	"github.com/miekg/dns"
)

// scenario is the world's writes, each made once.
func (w *diffWorld) scenario(t *testing.T) []*diffOp {
	t.Helper()
	const ok = "ok"
	var ops []*diffOp
	add := func(role, kind, want string, run func(ctx context.Context, n *diffNode) string) *diffOp {
		ops = append(ops, &diffOp{role: role, kind: kind, want: want, run: run})
		return ops[len(ops)-1]
	}
	api := func(role, kind, want string, call func(ctx context.Context, n *diffNode, a *diffAccount) error) *diffOp {
		a := w.accts[role]
		return add(role, kind, want, func(ctx context.Context, n *diffNode) string { return outcome(call(ctx, n, a)) })
	}
	update := func(role, kind, want string, prereqs, updates []string) *diffOp {
		m, key := wire(t, msg(t, diffZone, prereqs, updates)), w.accts[role].tsig
		return add(role, kind, want, func(ctx context.Context, n *diffNode) string {
			return dnsOutcome(n.u.Update(ctx, signedBy(key), "127.0.0.1:53", m))
		})
	}
	fqdn := func(label string) string { return label + "." + diffZone + "." }
	mint := func(role, kind, want, label, ip string) *diffOp {
		return update(role, kind, want, nil, []string{fmt.Sprintf("%s 60 IN A %s", fqdn(label), ip)})
	}
	repoint := func(role, kind, want string, h *storage.Hostname, ip string) *diffOp {
		return update(role, kind, want, nil, []string{fqdn(h.Label) + " 0 ANY A", fmt.Sprintf("%s 60 IN A %s", fqdn(h.Label), ip)})
	}
	create := func(role, kind, want string, label, ip *string) *diffOp {
		return api(role, kind, want, func(ctx context.Context, n *diffNode, a *diffAccount) error {
			_, err := n.rules.Lifecycle.Create(ctx, a.p, hostnames.CreateInput{IP: ip, Label: label})
			return err
		})
	}
	repointAPI := func(role, kind, want, id string, ip *string) *diffOp {
		return api(role, kind, want, func(ctx context.Context, n *diffNode, a *diffAccount) error {
			_, err := n.rules.Lifecycle.Update(ctx, a.p, id, hostnames.UpdateInput{IP: ip})
			return err
		})
	}
	publish := func(role, kind, want, user, key, subdomain, value string) *diffOp {
		return api(role, kind, want, func(ctx context.Context, n *diffNode, _ *diffAccount) error {
			return n.rules.Certificates.PublishChallenge(ctx, hostnames.ChallengeUpdate{User: user, Key: key, Subdomain: subdomain, TXT: value,
				From: netip.MustParseAddr("203.0.113.9")})
		})
	}
	createRecord := func(role, kind, want string, h *storage.Hostname, text string) *diffOp {
		return api(role, kind, want, func(ctx context.Context, n *diffNode, a *diffAccount) error {
			_, err := n.rules.Records.CreateRecord(ctx, a.p, h.ID, txt(text))
			return err
		})
	}
	setChallenge := func(role, kind, want string, h *storage.Hostname, value string) *diffOp {
		return api(role, kind, want, func(ctx context.Context, n *diffNode, a *diffAccount) error {
			return n.rules.Certificates.SetChallenges(ctx, a.p, h.ID, []string{value}, nil)
		})
	}
	createKey := func(role, kind, want string) *diffOp {
		return api(role, kind, want, func(ctx context.Context, n *diffNode, a *diffAccount) error {
			_, err := n.accts.CreateKey(ctx, a.id, accounts.KeyInput{Name: "scenario"})
			return err
		})
	}
	createTSIG := func(role, kind, want string) *diffOp {
		return api(role, kind, want, func(ctx context.Context, n *diffNode, a *diffAccount) error {
			_, err := n.accts.CreateTSIGKey(ctx, a.id, nil, accounts.TSIGInput{})
			return err
		})
	}
	credential := func(role, kind, want string, h *storage.Hostname) *diffOp {
		return api(role, kind, want, func(ctx context.Context, n *diffNode, a *diffAccount) error {
			_, err := n.rules.Certificates.CreateCredential(ctx, a.p, h.ID)
			return err
		})
	}
	register := func(kind, want string, from netip.Addr) {
		add("acme-dns", kind, want, func(ctx context.Context, n *diffNode) string {
			_, err := n.rules.Certificates.Register(ctx, from, nil)
			return outcome(err)
		})
	}

	// The limits.
	for i, h := range w.accts["rate-update"].hosts {
		if i < 6 {
			repointAPI("rate-update", limUpdates, "", h.ID, w.addr())
		} else {
			repoint("rate-update", limUpdates, "", h, *w.addr())
		}
	}
	for i := range 8 {
		if i < 6 {
			create("rate-create", limCreates, "", nil, w.addr())
		} else {
			mint("rate-create", limCreates, "", fmt.Sprintf("rate-create-m%d", i), *w.addr())
		}
	}
	for i := range 18 {
		if i < 12 {
			create("capped", limCap, "", nil, w.addr())
		} else {
			mint("capped", limCap, "", fmt.Sprintf("capped-m%d", i), *w.addr())
		}
	}
	lim := w.accts["limits"]
	for range 8 {
		createKey("limits", limKeys, "")
	}
	for range 6 {
		createTSIG("limits", limTSIG, "")
	}
	for range 6 {
		credential("limits", limCredentials, "", lim.hosts[0])
	}
	c := lim.creds[len(lim.creds)-1]
	for range acmeUpdates + 4 {
		publish("limits", limPublish, "", c.Username, c.Password, c.Username, w.challenge())
	}
	for range acmeUpdates + 3 {
		setChallenge("limits", limSetChallenges, "", lim.hosts[2], w.challenge())
	}
	for i := range 20 {
		// Ten at most on a hostname: MaxRecords refuses none.
		createRecord("limits", limRecords, "", lim.hosts[3+i%2], fmt.Sprintf("limits-%d", i))
	}
	for i := range 26 {
		register(limRegister, "", netip.AddrFrom4([4]byte{192, 0, 2, byte(i + 1)}))
	}

	// acme-dns registrations, whose writes are no account's.
	for i := range 4 {
		register("registration", ok, netip.AddrFrom4([4]byte{198, 51, 100, byte(i + 1)}))
	}
	r0 := w.regs[0]
	for range 3 {
		publish("acme-dns", "acme-dns update of a registration", ok, r0.Username, r0.Password, r0.Subdomain, w.challenge())
	}
	for id, want := range map[string]string{w.regs[1].Username: ok, "no-such-registration": apierror.CodeNotFound} {
		add("acme-dns", "registration delete", want, func(ctx context.Context, n *diffNode) string {
			return outcome(n.rules.Certificates.DeleteRegistration(ctx, id))
		})
	}

	// Accounts each of whose writes has its own answer, in any order.
	for i := range 4 {
		role := fmt.Sprintf("busy%d", i)
		a, other := w.accts[role], w.accts[fmt.Sprintf("busy%d", (i+1)%4)]
		hs := a.hosts
		for range 3 {
			create(role, "create", ok, nil, w.addr())
		}
		create(role, "create", apierror.CodeForbidden, nil, ptr(fmt.Sprintf("10.0.%d.1", i)))
		create(role, "create", apierror.CodeConflict, ptr(hs[2].Label), w.addr())
		repointAPI(role, "update", ok, hs[2].ID, w.addr())
		repointAPI(role, "update", ok, hs[3].ID, w.addr())
		repointAPI(role, "update", apierror.CodeForbidden, hs[4].ID, ptr(fmt.Sprintf("10.1.%d.1", i)))
		repointAPI(role, "update", apierror.CodeNotFound, "h_nosuchname", w.addr())
		repointAPI(role, "update", apierror.CodeNotFound, other.hosts[5].ID, w.addr())
		api(role, "renew", ok, func(ctx context.Context, n *diffNode, a *diffAccount) error {
			_, err := n.rules.Lifecycle.Renew(ctx, a.p, hs[5].ID)
			return err
		})
		for _, h := range []*storage.Hostname{hs[6], hs[7], hs[7]} { // a release again changes nothing
			api(role, "release", ok, func(ctx context.Context, n *diffNode, a *diffAccount) error {
				return n.rules.Lifecycle.Release(ctx, a.p, h.ID)
			})
		}
		createRecord(role, "record create", ok, hs[1], role+"-new0")
		createRecord(role, "record create", ok, hs[1], role+"-new1")
		createRecord(role, "record create", apierror.CodeConflict, hs[1], role+"-r2") // identical to one held
		api(role, "record update", ok, func(ctx context.Context, n *diffNode, a *diffAccount) error {
			_, err := n.rules.Records.UpdateRecord(ctx, a.p, hs[1].ID, a.recs[0].ID, txt(role+"-changed"))
			return err
		})
		for id, want := range map[string]string{a.recs[1].ID: ok, "r_nosuchrec": apierror.CodeNotFound} {
			api(role, "record delete", want, func(ctx context.Context, n *diffNode, a *diffAccount) error {
				return n.rules.Records.DeleteRecord(ctx, a.p, hs[1].ID, id)
			})
		}
		credential(role, "DNS-01 credential", ok, hs[0])
		setChallenge(role, "SetChallenges", ok, hs[0], w.challenge())
		c := a.creds[0]
		publish(role, "acme-dns update", ok, c.Username, c.Password, c.Username, w.challenge())
		publish(role, "acme-dns update", ok, c.Username, c.Password, c.Username, w.challenge())
		if i == 0 { // once: a refused password costs a bcrypt comparison
			publish(role, "acme-dns update", apierror.CodeUnauthorized, c.Username, "wrong", c.Username, w.challenge())
		}
		createKey(role, "API key", ok)
		createKey(role, "API key", ok)
		createTSIG(role, "TSIG key", ok)
		mint(role, "UPDATE mint", ok, role+"-m0", *w.addr())
		mint(role, "UPDATE mint", ok, role+"-m1", *w.addr())
		mint(role, "UPDATE mint", apierror.CodeForbidden, role+"-m2", fmt.Sprintf("10.2.%d.1", i))
		repoint(role, "UPDATE repoint", ok, hs[8], *w.addr())
		name := fqdn(hs[8].Label)
		update(role, "UPDATE repoint", dns.RcodeToString[dns.RcodeYXDomain], []string{name + " NONE ANY"},
			[]string{name + " 0 ANY A", fmt.Sprintf("%s 60 IN A %s", name, *w.addr())})
	}
	for i, op := range ops {
		op.node = i % len(w.nodes)
	}

	// The suspended account, on the node it is suspended on (the other
	// hears of it through the feed, which no test runs). Its writes that
	// start before the suspension may pass, those that start after it
	// returned must not, and none refused may be stored. The writes here
	// are those whose rules refuse a closed account themselves; the others
	// (Release, CreateCredential, SetChallenges, keys) rely on the door's
	// authentication of the caller.
	s := w.accts["suspended"]
	held := func(label string) func(ctx context.Context, q storage.Queries) bool {
		return func(ctx context.Context, q storage.Queries) bool {
			h, err := q.HostnameByLabel(ctx, w.dom.ID, label)
			return err == nil && h.AccountID == s.id
		}
	}
	points := func(id, ip string) func(ctx context.Context, q storage.Queries) bool {
		return func(ctx context.Context, q storage.Queries) bool {
			h, err := q.Hostname(ctx, id)
			return err == nil && h.IP == ip
		}
	}
	for _, after := range []bool{false, true} {
		phase, want, door := "b", ok, ok
		hs, creds := s.hosts[:8], s.creds[:2]
		if after {
			phase, want, door = "a", apierror.CodeForbidden, dns.RcodeToString[dns.RcodeNotAuth]
			hs, creds = s.hosts[8:], s.creds[2:]
		}
		var mine []*diffOp
		for i := range 6 {
			label := fmt.Sprintf("suspended-%s-c%d", phase, i)
			op := create("suspended", "create", want, ptr(label), w.addr())
			op.written = held(label)
			mine = append(mine, op)
		}
		for i := range 3 {
			label := fmt.Sprintf("suspended-%s-m%d", phase, i)
			op := mint("suspended", "UPDATE mint", door, label, *w.addr())
			op.written = held(label)
			mine = append(mine, op)
		}
		for _, h := range hs[:4] {
			ip := w.addr()
			op := repointAPI("suspended", "update", want, h.ID, ip)
			op.written = points(h.ID, *ip)
			mine = append(mine, op)
		}
		for _, h := range hs[4:6] {
			ip := *w.addr()
			op := repoint("suspended", "UPDATE repoint", door, h, ip)
			op.written = points(h.ID, ip)
			mine = append(mine, op)
		}
		for i, c := range creds {
			v, h := w.challenge(), hs[6+i]
			op := publish("suspended", "acme-dns update", want, c.Username, c.Password, c.Username, v)
			op.written = func(ctx context.Context, q storage.Queries) bool {
				cs, err := q.Challenges(ctx, h.ID)
				return err == nil && slices.ContainsFunc(cs, func(c storage.Challenge) bool { return c.Value == v })
			}
			mine = append(mine, op)
			text := fmt.Sprintf("suspended-%s-r%d", phase, i)
			op = createRecord("suspended", "record create", want, h, text)
			op.written = func(ctx context.Context, q storage.Queries) bool {
				rs, err := q.Records(ctx, h.ID)
				return err == nil && slices.ContainsFunc(rs, func(r storage.Record) bool { return strings.Contains(r.Data, text) })
			}
			mine = append(mine, op)
		}
		for _, op := range mine {
			op.after = after
		}
	}
	return ops
}
