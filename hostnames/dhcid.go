package hostnames

import (
	"context"
	"encoding/base64"
	"strings"

	"github.com/hostmint/hostmint/access"
	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/storage"
)

// maxDHCIDs bounds a hostname's DHCID RRset: a DHCP server keeps one
// record per name (RFC 4703); a few leave room for a handover.
const maxDHCIDs = 4

// SetDHCID sets the DHCID RRset a DHCP server keeps at a hostname (RFC
// 4701, 4703): each digest is a record's RDATA in base64 (an identifier
// type, a digest type and the digest). The service does not read it; it
// serves it beside the address, so that the server's conflict resolution
// finds it, and counts it against nothing. Only DNS UPDATE writes it.
func (s *Service) SetDHCID(ctx context.Context, p *access.Principal, id string, digests []string) error {
	if len(digests) > maxDHCIDs {
		return apierror.BadRequest("a hostname keeps at most %d DHCID records", maxDHCIDs)
	}
	for _, d := range digests {
		// RFC 4701 3.3: two octets of identifier type, one of digest type, the digest.
		if b, err := base64.StdEncoding.DecodeString(d); err != nil || len(b) < 4 || len(b) > 64 {
			return apierror.BadRequest("DHCID %q is not 4 to 64 octets of base64 (RFC 4701 3.3)", d)
		}
	}
	v := strings.Join(digests, "\n")
	_, err := s.change(ctx, p, id, func(ctx context.Context, tx *storage.Tx, h *storage.Hostname, _ *account) error {
		if h.DHCID == v {
			return nil
		}
		h.DHCID, h.UpdatedAt = v, s.now().UnixMilli()
		if err := tx.UpdateHostname(ctx, h); err != nil {
			return err
		}
		return tx.Changed(ctx, storage.KindHostname, h.ID)
	})
	return err
}
