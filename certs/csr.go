package certs

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"slices"
	"strings"

	"github.com/go-acme/lego/v4/certcrypto"
	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/labels"
)

// ParseCSR reads a PEM PKCS#10 request and checks its signature.
func ParseCSR(text string) (*x509.CertificateRequest, error) {
	b, _ := pem.Decode([]byte(text))
	if b == nil || b.Type != "CERTIFICATE REQUEST" && b.Type != "NEW CERTIFICATE REQUEST" {
		return nil, errors.New("csr is not a PEM \"CERTIFICATE REQUEST\" block")
	}
	csr, err := x509.ParseCertificateRequest(b.Bytes)
	if err != nil {
		return nil, err
	}
	if err := csr.CheckSignature(); err != nil {
		return nil, errors.New("csr signature does not verify")
	}
	return csr, nil
}

// CheckCSR is nil when csr asks for exactly name, or name and *.name, and
// nothing else (an IP address, e-mail or URI is refused too).
func CheckCSR(text, name string) error {
	csr, err := ParseCSR(text)
	if err != nil {
		return apierror.BadRequest("%v", err)
	}
	if len(csr.IPAddresses)+len(csr.EmailAddresses)+len(csr.URIs) > 0 {
		return apierror.BadRequest("csr may name only %s and *.%s, not addresses or URIs", name, name)
	}
	var names []string
	for _, n := range certcrypto.ExtractDomainsCSR(csr) {
		n = labels.Lower(strings.TrimSuffix(n, "."))
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	want1, want2 := []string{name}, []string{"*." + name, name}
	if !slices.Equal(names, want1) && !slices.Equal(names, want2) {
		return apierror.BadRequest("csr must cover exactly %s (and optionally *.%s), not %s", name, name, strings.Join(names, ", "))
	}
	return nil
}
