package hostnames

import (
	"context"
	"errors"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/storage"
)

// The [P2] abuse flow, driven by the operator through the admin API.
//
// suspend: the name stops resolving while a report is reviewed; its address,
// target and DNS-01 credentials are kept. restore: back to pending, then
// live once every nameserver serves it again. terminate: final (a certificate held is revoked).

// Suspend holds a hostname; suspending a suspended one changes nothing.
func (s *Abuse) Suspend(ctx context.Context, id string) (*storage.Hostname, error) {
	return s.abuse(ctx, id, func(h *storage.Hostname) (string, error) {
		switch h.Status {
		case storage.StatusReleased, storage.StatusTerminated:
			return "", apierror.Conflict("hostname %s is %s and cannot be suspended", h.Name, h.Status)
		}
		return storage.StatusSuspended, nil
	})
}

// Restore ends a suspension.
func (s *Abuse) Restore(ctx context.Context, id string) (*storage.Hostname, error) {
	return s.abuse(ctx, id, func(h *storage.Hostname) (string, error) {
		if h.Status != storage.StatusSuspended {
			return "", apierror.Conflict("hostname %s is %s, not suspended", h.Name, h.Status)
		}
		return storage.StatusPending, nil
	})
}

// Terminate ends a hostname for good; terminating a terminated one changes
// nothing. Its label stays taken: nobody mints it again.
func (s *Abuse) Terminate(ctx context.Context, id string) (*storage.Hostname, error) {
	return s.abuse(ctx, id, func(h *storage.Hostname) (string, error) {
		if h.Status == storage.StatusReleased {
			return "", apierror.Conflict("hostname %s was released and cannot be terminated", h.Name)
		}
		return storage.StatusTerminated, nil
	})
}

func (s *Abuse) abuse(ctx context.Context, id string, next func(*storage.Hostname) (string, error)) (*storage.Hostname, error) {
	var h *storage.Hostname
	err := s.write(ctx, id, func(ctx context.Context, tx *storage.Tx) error {
		var err error
		if h, err = tx.LockHostname(ctx, id); errors.Is(err, storage.ErrNotFound) {
			return apierror.HostnameNotFound()
		} else if err != nil {
			return err
		}
		status, err := next(h)
		if err != nil || status == h.Status {
			return err
		}
		h.Status, h.UpdatedAt = status, s.now().UnixMilli()
		if err := tx.UpdateHostname(ctx, h); err != nil {
			return err
		}
		if status == storage.StatusTerminated {
			if err := tx.RevokeCertificate(ctx, h.ID, h.UpdatedAt); err != nil {
				return err
			}
		}
		return tx.Changed(ctx, storage.KindHostname, h.ID)
	})
	return h, err
}
