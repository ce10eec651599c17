package hostnames

import "context"

// Usage is an account's active hostnames against its cap, counted as the
// cap check on create counts them (live and pending, not expired).
func (s *Service) Usage(ctx context.Context, accountID string) (active, limit int, err error) {
	q := s.store.Reader()
	acct, err := q.Account(ctx, accountID)
	if err != nil {
		return 0, 0, err
	}
	if active, err = q.CountActive(ctx, accountID, s.now().UnixMilli()); err != nil {
		return 0, 0, err
	}
	return active, s.Cap(acct), nil
}
