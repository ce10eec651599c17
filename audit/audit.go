// Package audit is the audit log: every write through the API or the
// dashboard, and every refused attempt at one by a known caller, kept in the
// store for a retention period and read back by the operator.
//
// An entry of a write is recorded inside the write's own transaction (see
// storage.WithAudit), so no write commits without its entry. A refusal has
// no transaction; it is recorded on its own once the answer is known.
//
// The log speaks no HTTP (nor DNS): a door hands it the status to record
// and a refusal's code, and decides which of its answers are no refusal to
// record (httperr.AuditCode for the HTTP doors).
package audit

import (
	"context"
	"log/slog"
	"time"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/storage"
)

// DefaultRetention is how long entries are kept unless configured.
const DefaultRetention = 90 * 24 * time.Hour

// Log records and reads audit entries.
type Log struct {
	store *storage.Store
	log   *slog.Logger
	// Failed hears of each entry that could not be recorded; nil for none.
	Failed func()
	// Dropped hears of each refusal not recorded because its actor had
	// refusalsPerMinute recorded already this minute; nil for none.
	Dropped func()
	quota   quota
	now     func() time.Time
}

// New returns the audit log kept in store.
func New(store *storage.Store, log *slog.Logger) *Log {
	return &Log{store: store, log: log, now: time.Now}
}

// Begin starts the entry of one request: every write committed under the
// returned context records it.
func Begin(ctx context.Context, e *storage.AuditEntry) context.Context {
	return storage.WithAudit(ctx, e)
}

// Finish completes e once its request is answered with status (the door's,
// recorded as it is: an HTTP status, 0 for DNS UPDATE) and code, the code
// of a refusal to record, "" otherwise. Entries its writes committed get
// that status, when it is not the one they were written with; a request
// that committed no write is recorded as refused, unless nothing needs
// recording: it ended well without writing or its door gave no code (the
// HTTP doors give none for a 401, whose caller they do not know, nor for a
// 503), or the database was unavailable (the entry could not be written
// either).
func (l *Log) Finish(e *storage.AuditEntry, status int, code string) {
	if e == nil {
		return
	}
	// The request's own context may have run out already.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if e.Audited() > 0 {
		if status != e.Status {
			if err := l.store.SetAuditStatus(ctx, e, status); err != nil {
				l.failed("correcting the status of an audit entry failed", e, err)
			}
		}
		return
	}
	if code == "" || code == apierror.CodeUnavailable {
		return
	}
	if !l.quota.take(e.Actor, l.now()) {
		if l.Dropped != nil {
			l.Dropped()
		}
		return
	}
	row := *e
	row.Result, row.Status = code, status
	if err := l.store.AddAudit(ctx, &row); err != nil {
		l.failed("recording a refused write in the audit log failed", e, err)
	}
}

func (l *Log) failed(msg string, e *storage.AuditEntry, err error) {
	if l.Failed != nil {
		l.Failed()
	}
	l.log.Error(msg, "action", e.Action, "actor", e.Actor, "err", err)
}

// Page is one page of entries, newest first; Next is the cursor of the
// following page, 0 when there is none.
type Page struct {
	Entries []storage.AuditEntry
	Next    int64
}

// List reads up to limit entries f selects.
func (l *Log) List(ctx context.Context, f storage.AuditFilter, limit int) (Page, error) {
	es, err := l.store.Reader().AuditEntries(ctx, f, limit+1)
	if err != nil {
		return Page{}, err
	}
	p := Page{Entries: es}
	if len(es) > limit {
		p.Entries = es[:limit]
		p.Next = es[limit-1].ID
	}
	return p, nil
}

// Keep deletes entries older than retention every interval until ctx ends.
// Every node may run it: deleting what another node deleted is harmless.
func (l *Log) Keep(ctx context.Context, retention, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		cutoff := time.Now().Add(-retention).UnixMilli()
		if n, err := l.store.PurgeAudit(ctx, cutoff); err != nil {
			if ctx.Err() == nil {
				l.log.Warn("purging old audit entries failed; trying again later", "err", err)
			}
		} else if n > 0 {
			l.log.Info("purged old audit entries", "entries", n, "retention", retention)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
