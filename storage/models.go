package storage

import (
	"net/netip"
	"strings"

	"github.com/uptrace/bun"
)

// Times are Unix milliseconds (UTC) in every table: the same integer in
// SQLite and PostgreSQL, compared and copied between them without any
// dialect's time formatting in the way. Zero means "not set".

// Account is a customer: a profile-1 account or a profile-2 team.
type Account struct {
	bun.BaseModel `bun:"table:accounts"`

	ID        string `bun:"id,pk"`
	Name      string `bun:"name"`
	Plan      string `bun:"plan"`
	Cap       *int   `bun:"cap"` // nil: the plan's default
	Billing   bool   `bun:"billing"`
	CreatedAt int64  `bun:"created_at"`
	// ActiveHostnames counts the account's live and pending hostnames,
	// expired [P1] ones included. Triggers on hostnames keep it (migration
	// 10); no code writes it.
	ActiveHostnames int   `bun:"active_hostnames"`
	SuspendedAt     int64 `bun:"suspended_at"` // 0: not suspended
	PlanEndsAt      int64 `bun:"plan_ends_at"` // 0: the plan does not end
	ClosedAt        int64 `bun:"closed_at"`    // 0: open; else closed for good
}

// An account's access: a suspended team, or one whose plan has ended, is
// closed. Its keys, dashboard sessions, sign-in links and DNS-01
// credentials stop working; its hostnames stay as they are.
const (
	AccountActive    = "active"
	AccountSuspended = "suspended"
	AccountEnded     = "ended"
	// AccountClosed is final: its hostnames released, its credentials
	// revoked; the row stays for the audit log.
	AccountClosed = "closed"
)

// AccessOnly is a with only the fields Access reads, as caches of keys
// hold it.
func (a *Account) AccessOnly() Account {
	return Account{ID: a.ID, SuspendedAt: a.SuspendedAt, PlanEndsAt: a.PlanEndsAt, ClosedAt: a.ClosedAt}
}

// Access is a's access state at now (Unix ms). accountOpen is the same
// rule in SQL.
func (a *Account) Access(now int64) string {
	switch {
	case a.ClosedAt != 0:
		return AccountClosed
	case a.SuspendedAt != 0:
		return AccountSuspended
	case a.PlanEndsAt != 0 && now >= a.PlanEndsAt:
		return AccountEnded
	}
	return AccountActive
}

// APIKey is a bearer key; the secret itself is never stored.
type APIKey struct {
	bun.BaseModel `bun:"table:api_keys"`

	ID         string `bun:"id,pk"`
	AccountID  string `bun:"account_id"`
	Name       string `bun:"name"`
	SecretHash string `bun:"secret_hash"`
	Scopes     string `bun:"scopes"` // JSON list of {scope, domain?, hostname?}
	ExpiresAt  int64  `bun:"expires_at"`
	RevokedAt  int64  `bun:"revoked_at"`
	CreatedAt  int64  `bun:"created_at"`
}

// TSIGKey signs DNS UPDATE messages (RFC 8945). TSIG needs the secret
// itself, so it is sealed with the certificate encryption key, never kept
// in clear.
type TSIGKey struct {
	bun.BaseModel `bun:"table:tsig_keys"`

	ID           string `bun:"id,pk"`
	AccountID    string `bun:"account_id"`
	Name         string `bun:"name"`
	KeyName      string `bun:"key_name"` // the TSIG record's owner: lowercase, no trailing dot
	Algorithm    string `bun:"algorithm"`
	SecretSealed string `bun:"secret_sealed"`
	Scopes       string `bun:"scopes"` // JSON list of {scope, domain?, hostname?}
	// IssuedBy is the API key that issued it ("" for the operator or the
	// dashboard); the key lives no longer than that one: its expiry,
	// its revocation.
	IssuedBy  string `bun:"issued_by"`
	ExpiresAt int64  `bun:"expires_at"`
	RevokedAt int64  `bun:"revoked_at"`
	CreatedAt int64  `bun:"created_at"`
}

// Domain is a zone this service is authoritative for. A pool domain has no
// account; a dedicated one (profile 2) belongs to one team.
type Domain struct {
	bun.BaseModel `bun:"table:domains"`

	ID          string `bun:"id,pk"`
	Name        string `bun:"name"` // lowercase, no trailing dot
	AccountID   string `bun:"account_id,nullzero"`
	Status      string `bun:"status"` // active | provisioning
	CAA         string `bun:"caa"`    // JSON, "" when unset
	DNSSEC      bool   `bun:"dnssec"`
	DSPublished bool   `bun:"ds_published"`
	CreatedAt   int64  `bun:"created_at"`
	DNSKEY      string `bun:"dnskey"`     // the zone's public DNSKEY RR, presentation form
	DNSSECKey   string `bun:"dnssec_key"` // its private key, sealed
	// NSEC3: its transfers deny with an NSEC3 chain (RFC 9276: no
	// iterations, no salt), not NSEC.
	NSEC3 bool `bun:"nsec3"`
	// A key rollover (domains/rollover.go): the key it brings in and its
	// private half, sealed; its stage (RolloverStarted; "" for none) and
	// when it was reached (Unix ms).
	NextDNSKEY    string `bun:"next_dnskey"`
	NextDNSSECKey string `bun:"next_dnssec_key"`
	Rollover      string `bun:"rollover"`
	RolloverAt    int64  `bun:"rollover_at"`
	// CatalogVersion counts the times the domain entered or left the
	// catalog (created: 1; before signed zones were transferred, each
	// signing or unsigning was one more), so that the catalog's serial,
	// their sum, only grows, and moves exactly when its members change.
	CatalogVersion int64 `bun:"catalog_version"`
}

// RolloverStarted is the stage of a domain's key rollover under way
// (domains/rollover.go): the new key is in the DNSKEY set, and both sign.
const RolloverStarted = "started"

// Domain statuses.
const (
	DomainActive       = "active"
	DomainProvisioning = "provisioning"
)

// Hostname is a registered name. Status holds what was decided by a write;
// expiry ([P1]) is read from ExpiresAt, so nothing has to run at expiry time.
type Hostname struct {
	bun.BaseModel `bun:"table:hostnames"`

	ID         string `bun:"id,pk"`
	AccountID  string `bun:"account_id"`
	DomainID   string `bun:"domain_id"`
	Label      string `bun:"label"`
	Name       string `bun:"name"` // label.domain, lowercase, no trailing dot
	IP         string `bun:"ip"`   // the address set by the caller, or the target's first
	Status     string `bun:"status"`
	ExpiresAt  int64  `bun:"expires_at"`
	CreatedAt  int64  `bun:"created_at"`
	UpdatedAt  int64  `bun:"updated_at"`
	ReleasedAt int64  `bun:"released_at"`

	Certificate string `bun:"certificate"` // [P2] self | managed | csr
	CA          string `bun:"ca"`          // [P2] letsencrypt | google; "" with self
	Class       string `bun:"class"`       // [P2] public | private, fixed at mint
	Target      string `bun:"target"`      // [P2] name followed, "" when set by ip
	Addrs       string `bun:"addrs"`       // addresses DNS serves, comma-separated
	// DHCID is the DHCID RRset a DHCP server keeps at the name (RFC 4701),
	// its records' base64 digests one a line; "" for none.
	DHCID     string `bun:"dhcid"`
	RefreshAt int64  `bun:"refresh_at"` // [P2] when the target is resolved again
	// CertExpiresAt is when the certificate the service holds for it expires
	// ([P2] csr and managed); a csr caller must post a fresh CSR before.
	CertExpiresAt int64 `bun:"cert_expires_at"`

	// Its account's suspension, plan end, plan and cap (Account's) as
	// LockHostname reads them with the row, so that a write checks the
	// team is open and charges its plan's rate limits inside its
	// transaction at no round trip of its own; other reads leave them zero.
	AccountSuspendedAt int64  `bun:"account_suspended_at,scanonly"`
	AccountPlanEndsAt  int64  `bun:"account_plan_ends_at,scanonly"`
	AccountPlan        string `bun:"account_plan,scanonly"`
	AccountCap         *int   `bun:"account_cap,scanonly"`
}

// ServedAddrs are the addresses DNS serves for h: its target's (Addrs),
// or else the one set by the caller. Both were checked when written.
func (h *Hostname) ServedAddrs() []netip.Addr {
	text := h.Addrs
	if text == "" {
		text = h.IP
	}
	var out []netip.Addr
	for _, s := range strings.Split(text, ",") {
		if a, err := netip.ParseAddr(s); err == nil && a.Zone() == "" {
			out = append(out, a.Unmap())
		}
	}
	return out
}

// Zone is the name of the domain h is minted on: its name is always its
// label under that domain, so no read of the domain is needed for it.
func (h *Hostname) Zone() string { return strings.TrimPrefix(h.Name, h.Label+".") }

// Stored hostname statuses ("expired" is derived, never stored).
const (
	StatusPending    = "pending"
	StatusLive       = "live"
	StatusReleased   = "released"
	StatusSuspended  = "suspended"
	StatusTerminated = "terminated"
)

// ActiveStatuses are the stored statuses of a hostname that DNS serves and
// its account's cap counts: live, and pending (new or repointed, on its
// way to live, and served meanwhile). An idle [P1] name past its
// expires_at stays stored live: Expired tells, and DNS stops answering it
// at that instant without a write.
var ActiveStatuses = []string{StatusLive, StatusPending}

// Active reports whether h's stored status is one of ActiveStatuses.
func (h *Hostname) Active() bool { return h.Status == StatusLive || h.Status == StatusPending }

// Expired reports whether h is live but its idle expiry has passed at now
// (Unix ms); expires_at 0 never expires.
func (h *Hostname) Expired(now int64) bool {
	return h.Status == StatusLive && h.ExpiresAt != 0 && now >= h.ExpiresAt
}

// RateEvent is one counted action of an account (a registration, an
// update), kept a short while so that limits hold across every node.
type RateEvent struct {
	bun.BaseModel `bun:"table:rate_events"`

	ID        int64  `bun:"id,pk,autoincrement"`
	AccountID string `bun:"account_id"`
	Kind      string `bun:"kind"`
	At        int64  `bun:"at"`
}

// Record is a caller-published record under a hostname ([P2]).
type Record struct {
	bun.BaseModel `bun:"table:records"`

	ID         string `bun:"id,pk"`
	HostnameID string `bun:"hostname_id"`
	Name       string `bun:"name"` // FQDN, lowercase, no trailing dot
	Type       string `bun:"type"`
	Data       string `bun:"data"` // JSON of the type's fields
	CreatedAt  int64  `bun:"created_at"`
	UpdatedAt  int64  `bun:"updated_at"`
}

// Credential is an acme-dns credential: it publishes DNS-01 challenge
// values for one hostname. The password is never stored.
type Credential struct {
	bun.BaseModel `bun:"table:acme_credentials"`

	ID           string `bun:"id,pk"` // the username, a UUID
	HostnameID   string `bun:"hostname_id"`
	PasswordHash string `bun:"password_hash"`
	CreatedAt    int64  `bun:"created_at"`
}

// Registration is an acme-dns registration for any domain: its owner
// points _acme-challenge.<their name> at Name by CNAME.
type Registration struct {
	bun.BaseModel `bun:"table:acme_registrations"`

	ID           string `bun:"id,pk"`     // the username, a UUID
	Subdomain    string `bun:"subdomain"` // Name's first label, a UUID
	Name         string `bun:"name"`      // the fulldomain, lowercase, no trailing dot
	PasswordHash string `bun:"password_hash"`
	AllowFrom    string `bun:"allow_from"` // CIDR prefixes, comma-separated; "" is anywhere
	Source       string `bun:"source"`     // the network it was registered from
	TXTNew       string `bun:"txt_new"`
	TXTOld       string `bun:"txt_old"`
	TXTAt        int64  `bun:"txt_at"`  // Unix ms TXTNew was written; 0: never
	UsedAt       int64  `bun:"used_at"` // Unix ms of the last update, or the registration
	CreatedAt    int64  `bun:"created_at"`
}

// Challenge is a DNS-01 challenge value published for a hostname.
type Challenge struct {
	bun.BaseModel `bun:"table:challenges"`

	ID         int64  `bun:"id,pk,autoincrement"`
	HostnameID string `bun:"hostname_id"`
	Value      string `bun:"value"`
	CreatedAt  int64  `bun:"created_at"`
}

// ACMEAccount is the service's account at one CA; its key is sealed.
type ACMEAccount struct {
	bun.BaseModel `bun:"table:acme_accounts"`

	CA           string `bun:"ca,pk"`
	Email        string `bun:"email"`
	KeySealed    string `bun:"key_sealed"`
	Registration string `bun:"registration"` // JSON of the CA's account resource
	CreatedAt    int64  `bun:"created_at"`
}

// Certificate is the certificate the service runs for a csr or managed
// hostname ([P2]): what is asked, what is held, and when work is due.
type Certificate struct {
	bun.BaseModel `bun:"table:certificates"`

	HostnameID string `bun:"hostname_id,pk"`
	Status     string `bun:"status"`     // see the Cert* statuses
	CA         string `bun:"ca"`         // the CA that issued the chain held
	CSR        string `bun:"csr"`        // csr mode: the caller's request, PEM
	Chain      string `bun:"chain"`      // the certificate and its issuers, PEM
	KeySealed  string `bun:"key_sealed"` // managed mode: the private key, sealed
	ExpiresAt  int64  `bun:"expires_at"` // the held certificate's notAfter
	DueAt      int64  `bun:"due_at"`     // when the next attempt or renewal is due
	Error      string `bun:"error"`      // why the last attempt failed
	LeaseUntil int64  `bun:"lease_until"`
	UpdatedAt  int64  `bun:"updated_at"`
}

// Certificate statuses.
const (
	CertRequested = "requested" // an order is due (issue, renew, or retry)
	CertIssuing   = "issuing"   // a node holds the lease and is ordering
	CertIssued    = "issued"
	CertFailed    = "failed" // the last order failed; retried at DueAt
	CertRevoking  = "revoking"
	CertRevoked   = "revoked"
)

// RetiredLabel is a label that was released on a domain. In profile 1 no one
// may take it again; AccountID says whose it was.
type RetiredLabel struct {
	bun.BaseModel `bun:"table:retired_labels"`

	DomainID  string `bun:"domain_id,pk"`
	Label     string `bun:"label,pk"`
	AccountID string `bun:"account_id"`
	RetiredAt int64  `bun:"retired_at"`
}

// Change is one row of the change feed: "object Kind/Ref changed". Nodes
// re-read the object, so applying a change twice or late is harmless.
type Change struct {
	bun.BaseModel `bun:"table:changes"`

	ID        int64  `bun:"id,pk,autoincrement"`
	Kind      string `bun:"kind"`
	Ref       string `bun:"ref"`
	CreatedAt int64  `bun:"created_at"`
}

// Change kinds.
const (
	KindHostname = "hostname"
	KindDomain   = "domain"
	KindKey      = "key"
	KindAccount  = "account"
	KindTSIGKey  = "tsig_key"
	// KindRegistration names an acme-dns registration (its served values).
	KindRegistration = "acme_registration"
)
