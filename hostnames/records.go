package hostnames

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/hostmint/hostmint/accounts"
	"strings"
	"time"

	"github.com/hostmint/hostmint/access"
	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/apikey"
	"github.com/hostmint/hostmint/labels"
	"github.com/hostmint/hostmint/ratelimit"
	"github.com/hostmint/hostmint/records"
	"github.com/hostmint/hostmint/storage"
)

// Caller-published records ([P2]): at most MaxRecords a hostname, written
// only while it is live, counted against the team's record write rate.

// MaxRecords is the spec's limit of records per hostname.
const MaxRecords = 10

// DefaultRecordWrites is recordWritePerMinute when the Corefile sets none.
const DefaultRecordWrites = 60

// Record operations, for the state rules.
const (
	opCreate = "create"
	opChange = "change"
	opDelete = "delete"
)

// Records lists a hostname's records, oldest first.
func (s *Records) Records(ctx context.Context, p *access.Principal, hostnameID string) (*storage.Hostname, []storage.Record, error) {
	q := s.store.Reader()
	h, err := s.owned(ctx, q, p, hostnameID, access.HostnamesRead)
	if err != nil {
		return nil, nil, err
	}
	rs, err := q.Records(ctx, h.ID)
	return h, rs, err
}

// CreateRecord publishes a record under a hostname.
func (s *Records) CreateRecord(ctx context.Context, p *access.Principal, hostnameID string, in records.Input) (*storage.Record, error) {
	if in.Name == nil { // a name is read against the hostname's, below
		if _, err := records.Parse(in, true); err != nil {
			return nil, err
		}
	}
	var out *storage.Record
	err := s.write(ctx, p.AccountID, func(ctx context.Context, tx *storage.Tx) error {
		h, err := s.recordHost(ctx, tx, p, hostnameID, opCreate)
		if err != nil {
			return err
		}
		rec, err := records.Parse(relative(in, h.Name), true)
		if err != nil {
			return err
		}
		existing, err := tx.Records(ctx, h.ID)
		if err != nil {
			return err
		}
		if len(existing) >= MaxRecords {
			return apierror.Conflict("hostname %s holds %d records, the most it may; delete one first", h.Name, MaxRecords)
		}
		if err := s.checkTLSA(ctx, tx, h, rec); err != nil {
			return err
		}
		now := time.Now().UnixMilli()
		out = &storage.Record{ID: "r_" + apikey.Random(10), HostnameID: h.ID, Name: fullName(rec.Label, h.Name),
			Type: rec.Type, CreatedAt: now, UpdatedAt: now}
		if out.Data, err = encode(rec.Data); err != nil {
			return err
		}
		if err := unique(existing, out); err != nil {
			return err
		}
		if err := soleNullMX(existing, out); err != nil {
			return err
		}
		if err := tx.InsertRecord(ctx, out); err != nil {
			return err
		}
		return tx.Changed(ctx, storage.KindHostname, h.ID)
	})
	return out, err
}

// relative is in with its name made relative to hostname: the API answers
// records' names fully qualified, and a caller may send one back ("the
// hostname itself" or "a name under it", with or without the final dot).
func relative(in records.Input, hostname string) records.Input {
	if in.Name == nil {
		return in
	}
	n := strings.TrimSuffix(labels.Lower(*in.Name), ".")
	switch {
	case n == hostname:
		n = ""
	case strings.HasSuffix(n, "."+hostname):
		n = strings.TrimSuffix(n, "."+hostname)
	default:
		return in
	}
	in.Name = &n
	return in
}

// UpdateRecord changes a record's value; its id, type and name stay.
func (s *Records) UpdateRecord(ctx context.Context, p *access.Principal, hostnameID, recordID string, in records.Input) (*storage.Record, error) {
	var out *storage.Record
	err := s.write(ctx, p.AccountID, func(ctx context.Context, tx *storage.Tx) error {
		h, err := s.recordHost(ctx, tx, p, hostnameID, opChange)
		if err != nil {
			return err
		}
		if out, err = record(ctx, tx, h, recordID); err != nil {
			return err
		}
		// Without a name the record keeps its own (a TLSA's carries its port).
		sent := in.Name != nil
		if !sent {
			label := strings.TrimSuffix(strings.TrimSuffix(out.Name, h.Name), ".")
			in.Name = &label
		}
		rec, err := records.Parse(relative(in, h.Name), false)
		if err != nil {
			return err
		}
		if rec.Type != out.Type {
			return apierror.BadRequest("type %s differs from the record's type %s; delete it and create a new one", rec.Type, out.Type)
		}
		if sent && fullName(rec.Label, h.Name) != out.Name {
			return apierror.BadRequest("name %q differs from the record's name %s; delete it and create a new one", *in.Name, out.Name)
		}
		if err := s.checkTLSA(ctx, tx, h, rec); err != nil {
			return err
		}
		if out.Data, err = encode(rec.Data); err != nil {
			return err
		}
		existing, err := tx.Records(ctx, h.ID)
		if err != nil {
			return err
		}
		if err := unique(existing, out); err != nil {
			return err
		}
		if err := soleNullMX(existing, out); err != nil {
			return err
		}
		out.UpdatedAt = time.Now().UnixMilli()
		if err := tx.UpdateRecord(ctx, out); err != nil {
			return err
		}
		return tx.Changed(ctx, storage.KindHostname, h.ID)
	})
	return out, err
}

// DeleteRecord removes a record.
func (s *Records) DeleteRecord(ctx context.Context, p *access.Principal, hostnameID, recordID string) error {
	return s.write(ctx, p.AccountID, func(ctx context.Context, tx *storage.Tx) error {
		h, err := s.recordHost(ctx, tx, p, hostnameID, opDelete)
		if err != nil {
			return err
		}
		if _, err := record(ctx, tx, h, recordID); err != nil {
			return err
		}
		if err := tx.DeleteRecord(ctx, recordID); err != nil {
			return err
		}
		return tx.Changed(ctx, storage.KindHostname, h.ID)
	})
}

// recordHost reads the hostname a record write is for, checks its state
// and counts the write against the team's rate.
func (s *Records) recordHost(ctx context.Context, tx *storage.Tx, p *access.Principal, id, op string) (*storage.Hostname, error) {
	h, err := s.owned(ctx, tx, p, id, access.HostnamesWrite)
	if err != nil {
		return nil, err
	}
	switch h.Status {
	case storage.StatusLive:
	case storage.StatusSuspended:
		if op == opChange {
			return nil, apierror.Forbidden("hostname %s is suspended while an abuse report is reviewed", h.Name)
		}
		return nil, apierror.Conflict("hostname %s is suspended; its records are frozen", h.Name)
	case storage.StatusPending:
		return nil, apierror.Conflict("hostname %s is not live yet; retry once it reads live", h.Name)
	default:
		return nil, apierror.Conflict("hostname %s is %s; its records are frozen", h.Name, h.Status)
	}
	acct, err := tx.LockAccount(ctx, p.AccountID)
	if err != nil {
		return nil, err
	}
	if err := accounts.CheckOpen(acct, s.now()); err != nil {
		return nil, err // suspended since its key was checked
	}
	limit := ratelimit.Limit{Kind: "record", Max: s.recordWrites(), Window: time.Minute, What: "record writes"}
	if err := ratelimit.Take(ctx, tx, p.AccountID, limit, time.Now()); err != nil {
		return nil, err
	}
	return h, nil
}

func (s *Records) recordWrites() int {
	if s.writes > 0 {
		return s.writes
	}
	return DefaultRecordWrites
}

// record reads a record of h; another hostname's is as unknown as none.
func record(ctx context.Context, tx *storage.Tx, h *storage.Hostname, id string) (*storage.Record, error) {
	r, err := tx.Record(ctx, id)
	if errors.Is(err, storage.ErrNotFound) || err == nil && r.HostnameID != h.ID {
		return nil, apierror.NotFound("Record not found")
	}
	return r, err
}

// checkTLSA: a TLSA record means something only where DNSSEC protects it,
// so it waits until the domain is signed and its DS published.
func (s *Records) checkTLSA(ctx context.Context, tx *storage.Tx, h *storage.Hostname, rec *records.Record) error {
	if rec.Type != "TLSA" {
		return nil
	}
	d, err := tx.Domain(ctx, h.DomainID)
	if err != nil {
		return err
	}
	if !d.DNSSEC || !d.DSPublished {
		return apierror.Conflict("TLSA needs DNSSEC: domain %s must be signed and its DS published at the parent first", d.Name)
	}
	return nil
}

// unique refuses a record equal to another one at its name: DNS serves an
// RRset, and a copy would only take a slot (RFC 2181 5).
func unique(existing []storage.Record, r *storage.Record) error {
	for _, e := range existing {
		if e.ID != r.ID && e.Name == r.Name && e.Type == r.Type && e.Data == r.Data {
			return apierror.Conflict("an identical %s record exists at %s (id %s)", r.Type, r.Name, e.ID)
		}
	}
	return nil
}

// soleNullMX keeps a null MX alone at its name: it says the name takes no
// mail, and a name that has one "MUST NOT advertise any other MX RR"
// (RFC 7505 3).
func soleNullMX(existing []storage.Record, r *storage.Record) error {
	if r.Type != "MX" {
		return nil
	}
	null := func(rec *storage.Record) bool {
		var d records.Data
		return json.Unmarshal([]byte(rec.Data), &d) == nil && d.Exchange == "."
	}
	for i := range existing {
		e := &existing[i]
		if e.ID != r.ID && e.Name == r.Name && e.Type == "MX" && (null(e) || null(r)) {
			return apierror.Conflict("%s would have a null MX (0 .: it takes no mail) beside another MX (id %s); "+
				"a null MX must be its only MX (RFC 7505), so delete one first", r.Name, e.ID)
		}
	}
	return nil
}

func fullName(label, host string) string {
	if label == "" {
		return host
	}
	return label + "." + host
}

func encode(d records.Data) (string, error) {
	b, err := json.Marshal(d)
	return string(b), err
}
