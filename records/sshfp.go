package records

import (
	"errors"

	"github.com/hostmint/hostmint/apierror"
	"github.com/miekg/dns"
)

// sshfpDigits is the fingerprint length, in hex digits, of each fptype.
var sshfpDigits = map[int]int{1: 40, 2: 64}

func parseSSHFP(in Input, _ bool, _ string) (Data, error) {
	const algs = "1 (RSA), 2 (DSA), 3 (ECDSA), 4 (Ed25519) or 6 (Ed448)"
	if in.Algorithm == nil {
		return Data{}, apierror.BadRequest("algorithm is required: " + algs)
	}
	// 5 is unassigned in the IANA SSHFP registry.
	alg := *in.Algorithm
	if alg < 1 || alg > 6 || alg == 5 {
		return Data{}, apierror.BadRequest("algorithm must be "+algs+", got %d", alg)
	}
	if in.FPType == nil {
		return Data{}, apierror.BadRequest("fptype is required: 1 (SHA-1) or 2 (SHA-256)")
	}
	fpt := *in.FPType
	if fpt != 1 && fpt != 2 {
		return Data{}, apierror.BadRequest("fptype must be 1 (SHA-1) or 2 (SHA-256), got %d", fpt)
	}
	fp, err := hexField(in.Fingerprint, "fingerprint")
	if err != nil {
		return Data{}, err
	}
	if want := sshfpDigits[fpt]; len(fp) != want {
		return Data{}, apierror.BadRequest("fingerprint must be %d hex digits for fptype %d, got %d", want, fpt, len(fp))
	}
	return Data{Algorithm: ptr(alg), FPType: ptr(fpt), Fingerprint: fp}, nil
}

func sshfpRR(d Data, h dns.RR_Header) (dns.RR, error) {
	alg, err := uint8Of(d.Algorithm, "algorithm")
	if err != nil {
		return nil, err
	}
	fpt, err := uint8Of(d.FPType, "fptype")
	if err != nil {
		return nil, err
	}
	if d.Fingerprint == "" {
		return nil, errors.New("fingerprint missing")
	}
	return &dns.SSHFP{Hdr: h, Algorithm: alg, Type: fpt, FingerPrint: d.Fingerprint}, nil
}
