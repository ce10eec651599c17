//go:build race

package hostnames

// dummyHash, in a build with the race detector (tests only), is at cost 5:
// the detector makes bcrypt about 30 times slower (4 s at acme-dns's cost
// 10, about 0.1 s at 5), and every refused acme-dns credential in the test
// suite compares against it. Tests that weigh it against an imported hash import theirs
// at the same cost (e2e's acmeDNSCost).
const dummyHash = "$2a$05$EijBk/NeQz0zexAuHtTwnOFxNoBPdNGIsOaIUeNsnB2lzPzQxkqk2"
