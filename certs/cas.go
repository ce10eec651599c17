package certs

import "slices"

// The public CAs the service knows: a [P2] hostname's ca names one, and
// the Corefile's acme_ca configures where each is ordered from.
const (
	LetsEncrypt = "letsencrypt"
	Google      = "google"
)

// CANames are the known CAs, the default first.
var CANames = []string{LetsEncrypt, Google}

// KnownCA reports whether name is one of CANames.
func KnownCA(name string) bool { return slices.Contains(CANames, name) }

// caaIdentities are the issuer domain names each CA's CAA "issue" records
// name (RFC 8659).
var caaIdentities = map[string]string{LetsEncrypt: "letsencrypt.org", Google: "pki.goog"}

// CAAIdentity is the issuer domain name a CAA record gives to let ca
// issue ("" for an unknown CA).
func CAAIdentity(ca string) string { return caaIdentities[ca] }
