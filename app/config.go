// Package app is Hostmint's composition root: from a Config it opens the
// store (one per database, shared by every hostname block and by the old
// and new instances of a CoreDNS reload), builds the services, serves the
// HTTP API and the dashboard, and runs the background work. The CoreDNS
// plugin parses the Corefile into a Config, calls Start, and answers DNS
// from the Index the store's feed keeps current; nothing else in the
// project builds services.
package app

import (
	"net"
	"net/netip"
	"slices"
	"time"

	"github.com/hostmint/hostmint/audit"
	"github.com/hostmint/hostmint/certs"
	"github.com/hostmint/hostmint/plans"
	"github.com/hostmint/hostmint/served"
	"github.com/hostmint/hostmint/storage"
)

// Config is the application's configuration: the hostname block's options
// (the plugin README documents each).
type Config struct {
	Profile int // 1 or 2 (Start makes it a profile.Profile)
	Dialect storage.Dialect
	DSN     string
	// ReadOnly: a DNS-only node that reads the store (a hot standby)
	// and never writes (StartReadOnly).
	ReadOnly bool
	// MaxLag: past it behind the writers, the node reports not ready
	// (0: never).
	MaxLag         time.Duration
	API            string // HOST:PORT the HTTP API listens on
	BaseURL        string // "" : http://API
	AdminTokenFile string
	Domains        []string     // lowercase, no trailing dot
	Nameservers    []Nameserver // at least one
	SOA            served.SOA   // every served zone's SOA: contact, timers
	IdleExpiry     time.Duration
	Caps           map[string]int // active hostnames by plan
	BlockedLabels  string         // a file of labels refused at mint, "" for none
	FeedPoll       time.Duration
	RecordWrites   int     // [P2] record writes a minute per team (0: the default)
	ACMEUpdates    int     // acme-dns updates a minute per credential (0: the default)
	ACMEDNSDomain  string  // acme-dns registrations for any domain are made under it; "": none
	CertRenewAt    float64 // [P2] fraction of a managed certificate's life after which it is renewed (0: the default)
	DiagnoseBudget time.Duration
	Diagnoses      int // [P2] diagnose reports a minute per team (0: the default)
	TrustedProxies []netip.Prefix
	AuditRetention time.Duration
	Changes        storage.ChangeRetention
	ACMECAs        map[string]ACMECA // by name: letsencrypt, google
	ACMEEmail      string
	CertKeyFile    string
	// DynamicUpdate: the DNS servers take UPDATE messages signed with the
	// store's TSIG keys.
	DynamicUpdate bool
	Resolvers     []string // HOST:PORT
	// ResolverLabels name Resolvers (by address) in diagnose reports; a
	// resolver without one is "resolver N".
	ResolverLabels map[string]string
	// TargetResolvers resolve [P2] targets; none: Resolvers do.
	TargetResolvers []string
	// TargetAllow and TargetDeny are the suffixes of the names a target
	// may follow (targets.Names).
	TargetAllow, TargetDeny []string
	CTLog                   string
}

// CANames are the ACME CAs an acme_ca may configure.
var CANames = certs.CANames

// Nameserver is one of the service's nameservers.
type Nameserver struct {
	Name string // FQDN, lowercase
	Addr string // HOST:PORT where it answers; "" if not given
}

// ACMECA is a configured ACME CA.
type ACMECA struct {
	Directory       string
	Root            string // a PEM file of roots to trust for it, "" for the system's
	EABKid, EABHMAC string // external account binding, for CAs that need it
}

// Defaults is the configuration of an empty hostname block.
func Defaults() Config {
	return Config{
		Profile:        1,
		Dialect:        storage.SQLite,
		DSN:            "./data/hostmint.db",
		API:            "127.0.0.1:8080",
		AdminTokenFile: "./data/admin.token",
		IdleExpiry:     7 * 24 * time.Hour,
		Caps:           plans.DefaultCaps(),
		FeedPoll:       time.Second,
		AuditRetention: audit.DefaultRetention,
		Changes:        storage.DefaultChangeRetention,
		ACMECAs:        map[string]ACMECA{},
		SOA:            served.DefaultSOA,
	}
}

// NameserverSet is the Nameservers every served zone's NS set holds, with
// the addresses given to them (a nameserver named twice has each).
func (c *Config) NameserverSet() served.Nameservers {
	ns := served.Nameservers{Addrs: map[string][]netip.Addr{}}
	for _, n := range c.Nameservers {
		if !slices.Contains(ns.Names, n.Name) {
			ns.Names = append(ns.Names, n.Name)
		}
		host, _, _ := net.SplitHostPort(n.Addr)
		if a, err := netip.ParseAddr(host); err == nil && !slices.Contains(ns.Addrs[n.Name], a.Unmap()) {
			ns.Addrs[n.Name] = append(ns.Addrs[n.Name], a.Unmap())
		}
	}
	return ns
}
