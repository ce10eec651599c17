// Package dnsupdate is the DNS UPDATE door (RFC 2136): it reads an UPDATE
// message whose TSIG signature the DNS server has verified, checks its
// prerequisites and applies its updates as the rule calls they stand for,
// all in one storage transaction (all of it or none of it).
//
// What an update means is fixed by the rules, not here: an address at a
// hostname's name is the hostname's address (minted, repointed, released
// through hostnames.Service); TXT at _acme-challenge.<hostname> is a
// DNS-01 value (hostnames.Certificates). A refusal of a rule comes back as
// an rcode and an Extended DNS Error carrying the rule's own words; that
// mapping is in one place (answer.go). A signed message is applied at most
// once: its MAC is recorded whatever became of it, and one seen before is
// refused (replay.go).
//
// It knows nothing of TSIG verification, sockets or the DNS index.
package dnsupdate
