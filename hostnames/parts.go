package hostnames

import (
	"github.com/hostmint/hostmint/diagnose"
	"github.com/hostmint/hostmint/seal"
	"github.com/hostmint/hostmint/targets"
)

// Records are a [P2] hostname's caller-published records (records.go).
type Records struct {
	*core
	writes int // record writes a minute per team; 0: the default
}

// NewRecords makes the records part; writesPerMinute 0 is the default.
func NewRecords(hs *Service, writesPerMinute int) *Records {
	return &Records{core: hs.core, writes: writesPerMinute}
}

// Certificates are a hostname's certificate (certificate.go) and its
// DNS-01 credentials and challenge values (dns01.go).
type Certificates struct {
	*core
	sealKey seal.Key // opens managed private keys; nil: none
	updates int      // acme-dns updates a minute per credential; 0: the default
	acmeDNS string   // registrations for any domain are made under it; "": none
	bcrypts *bcryptGate
}

// NewCertificates makes the certificates and DNS-01 part.
func NewCertificates(hs *Service, sealKey seal.Key, acmeUpdatesPerMinute int) *Certificates {
	return &Certificates{core: hs.core, sealKey: sealKey, updates: acmeUpdatesPerMinute, bcrypts: newBcryptGate()}
}

// Watcher is the [P2] background work of every node (watch.go,
// refresh.go): pending hostnames confirmed live, targets followed.
type Watcher struct {
	*core
	resolver *targets.Resolver
}

// NewWatcher makes the watcher; resolver follows targets.
func NewWatcher(hs *Service, resolver *targets.Resolver) *Watcher {
	return &Watcher{core: hs.core, resolver: resolver}
}

// Abuse are the operator's [P2] abuse actions (abuse.go).
type Abuse struct{ *core }

// NewAbuse makes the abuse part.
func NewAbuse(hs *Service) *Abuse { return &Abuse{core: hs.core} }

// Diagnoser answers [P2] diagnose reports (diagnose.go).
type Diagnoser struct {
	*core
	cfg       diagnose.Config
	perMinute int // reports a minute per team; 0: the default
}

// NewDiagnoser makes the diagnose part.
func NewDiagnoser(hs *Service, cfg diagnose.Config, perMinute int) *Diagnoser {
	return &Diagnoser{core: hs.core, cfg: cfg, perMinute: perMinute}
}

// Rules are every part, as the HTTP layers take them.
type Rules struct {
	Lifecycle    *Service
	Records      *Records
	Certificates *Certificates
	Abuse        *Abuse
	Diagnoser    *Diagnoser
}

// DefaultRules are every part on hs with its defaults: the spec's limits,
// and diagnose with no nameserver, resolver or CT log to ask.
func DefaultRules(hs *Service) Rules {
	return Rules{Lifecycle: hs, Records: NewRecords(hs, 0), Certificates: NewCertificates(hs, hs.cfg.SealKey, 0),
		Abuse: NewAbuse(hs), Diagnoser: NewDiagnoser(hs, diagnose.Config{}, 0)}
}
