package app

import (
	"context"
	"errors"
	"maps"
	"time"

	"github.com/hostmint/hostmint/accounts"
	"github.com/hostmint/hostmint/audit"
	"github.com/hostmint/hostmint/dnsupdate"
	"github.com/hostmint/hostmint/storage"
	"github.com/miekg/dns"
)

// DNS UPDATE: the plugin verifies TSIG with the secrets of the store's
// keys (TSIGSecrets, taken when a server block is set up) and hands
// signed messages to the App's Updater.

// TSIGSecrets are the secrets of the store's TSIG keys, by key name with
// the trailing dot, as a DNS server verifies them. A store already open in
// this process answers from its ring; otherwise the keys are read once.
func TSIGSecrets(cfg Config) (map[string]string, error) {
	sharedMu.Lock()
	n := nodes[nodeKey(&cfg)]
	sharedMu.Unlock()
	if n != nil && n.feed.Loaded() {
		return n.keyring.Secrets(), nil
	}
	key, err := certKey(cfg.CertKeyFile, cfg.ReadOnly)
	if err != nil || len(key) == 0 {
		return map[string]string{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	store, err := openStore(ctx, &cfg)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	ring := accounts.NewKeyring(store, key)
	if err := ring.Load(ctx, store.Reader()); err != nil {
		return nil, err
	}
	return ring.Secrets(), nil
}

// TSIGSecrets are the secrets of the store's TSIG keys as the node holds
// them now, by key name with the trailing dot.
func (n *Node) TSIGSecrets() map[string]string { return n.node.keyring.Secrets() }

// CheckTSIG is nil when the store's TSIG key named name may sign now with
// algorithm (accounts.Keyring.Check: not revoked, not expired, its own
// algorithm, its team open).
func (n *Node) CheckTSIG(name, algorithm string) error { return n.node.keyring.Check(name, algorithm) }

// MayTransferTSIG reports whether the store's TSIG key named name may
// transfer zone (accounts.Keyring.MayTransfer); err is a store failure.
func (n *Node) MayTransferTSIG(ctx context.Context, name, algorithm, zone string) (bool, error) {
	err := n.node.keyring.MayTransfer(ctx, name, algorithm, zone)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, accounts.ErrNoTransfer), errors.Is(err, accounts.ErrUnknownTSIGKey), errors.Is(err, accounts.ErrClosedTeam):
		return false, nil
	}
	return false, err
}

// OnTSIGChange registers f to run whenever the node's TSIG keys change.
func (n *Node) OnTSIGChange(f func()) { n.node.keyring.OnChange(f) }

// UpdateDoor is the DNS UPDATE door as a DNS server takes it: the rcode
// of a message's answer and the Extended DNS Error that says why (nil for
// none); err when its key may not sign (NOTAUTH with BADKEY).
type UpdateDoor struct {
	door interface {
		Update(ctx context.Context, sig *dns.TSIG, addr string, r *dns.Msg) (dnsupdate.Answer, error)
	}
}

// Update applies r, signed with sig, from the client at addr.
func (d UpdateDoor) Update(ctx context.Context, sig *dns.TSIG, addr string, r *dns.Msg) (int, *dns.EDNS0_EDE, error) {
	a, err := d.door.Update(ctx, sig, addr, r)
	return a.Rcode, a.EDE, err
}

// UpdateDoor applies DNS UPDATE messages through the rules.
func (a *App) UpdateDoor() UpdateDoor { return UpdateDoor{a.updater} }

// UpdateDoor refuses DNS UPDATE messages: a read-only node writes nothing.
func (n *Node) UpdateDoor() UpdateDoor { return UpdateDoor{dnsupdate.ReadOnly{}} }

// TSIGWindow is how far a signed message's time may be off this server's
// clock, whatever fudge it carries: the window the UPDATE door remembers
// MACs for (dnsupdate.MaxFudge).
const TSIGWindow = dnsupdate.MaxFudge

// ServeTSIG tells the node which keys its DNS servers verify now. During
// a reload for new keys (ReloadTSIG) the new servers are set up before the
// old ones stop, and until then a query may reach either: their keys count
// once the reload is done.
func (n *Node) ServeTSIG(secrets map[string]string) {
	m := maps.Clone(secrets)
	n.node.tsigMu.Lock()
	defer n.node.tsigMu.Unlock()
	if n.node.reloading > 0 {
		n.node.incoming = &m
		return
	}
	n.node.served.Store(&m)
}

// ReloadTSIG runs reload, which restarts the DNS servers for new keys; the
// keys the new servers verify (ServeTSIG) count once it returned, if it
// worked.
func (n *Node) ReloadTSIG(reload func() error) {
	n.node.tsigMu.Lock()
	n.node.reloading++
	n.node.tsigMu.Unlock()
	err := reload()
	n.node.tsigMu.Lock()
	defer n.node.tsigMu.Unlock()
	if n.node.reloading--; n.node.reloading == 0 {
		if n.node.incoming != nil && err == nil {
			n.node.served.Store(n.node.incoming)
		}
		n.node.incoming = nil
	}
}

// awaitTSIG waits, up to 10 s (a reload on a loaded machine), until the
// node's DNS servers verify the key named name (a new key reaches them by
// a reload).
func (n *node) awaitTSIG(ctx context.Context, name string) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		if m := n.served.Load(); m != nil {
			if _, ok := (*m)[name+"."]; ok {
				return
			}
		}
		select {
		case <-ctx.Done():
			log.Warningf("TSIG key %s is not verified by this node's DNS servers yet", name)
			return
		case <-t.C:
		}
	}
}

// auditor records UPDATE messages in the audit log, as the API's writes.
type auditor struct{ log *audit.Log }

func (a auditor) Begin(ctx context.Context, e *storage.AuditEntry) context.Context {
	return audit.Begin(ctx, e)
}

func (a auditor) Finish(e *storage.AuditEntry, out dnsupdate.Answer) {
	if out.Rcode == dns.RcodeServerFailure {
		return // the store could not be reached: neither could the entry
	}
	e.Detail = out.Words() // the EDE's words, which Kea and nsupdate, sending no EDNS, never see
	a.log.Finish(e, 0, out.AuditCode())
}
