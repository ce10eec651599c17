// Package chain signs a zone whole, for its secondaries: every RRset with
// an RRSIG, and a denial chain (NSEC, or NSEC3 per RFC 9276) over every
// name in canonical order, so that a secondary that holds no key serves
// validated answers, positive and negative.
//
// A signed zone here is a pure function of three things: what the zone
// serves at a serial (the index's projection), the feed's clock at that
// serial (the hour of its newest change), and the zone's key. Signatures
// are deterministic (RFC 6979 nonces) and each RRset's validity window is
// fixed by its owner name and that clock (Window), so:
//   - an IXFR can state exactly which signatures a secondary holds at its
//     serial, by making them again (or finding them in the cache), with no
//     second journal of what was sent;
//   - every node that follows the same feed transfers the same bytes, so a
//     secondary may move between nodes and still take IXFRs;
//   - renewals are changes like any other: when the clock passes an
//     owner's window, its signatures are made anew, and the next IXFR
//     carries them. Owners' windows start at hours spread over Step by a
//     hash of the name, so a zone's renewals come a few at a time, never
//     all at once.
//
// The primary's own answers are signed online (package sign), with the
// same key: answers and transfers validate with one DNSKEY set.
package chain
