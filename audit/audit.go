// Package audit is the audit log: every write through the API or the
// dashboard, and every refused attempt at one by a known caller, kept in the
// store for a retention period and read back by the operator.
//
// An entry of a write is recorded inside the write's own transaction (see
// storage.WithAudit), so no write commits without its entry. A refusal has
// no transaction; it is recorded on its own once the answer is known.
package audit

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
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

// Finish completes e once its request is answered with status (and code,
// the error code of a refusal, "" otherwise). Entries its writes committed
// get that status, when it is not the one they were written with; a request
// that committed no write is recorded as refused, unless nothing needs
// recording: it ended well without writing, it is a 401 (the caller is not
// known), or the database was unavailable (the entry could not be written
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
	if code == "" || status == http.StatusUnauthorized ||
		status == http.StatusServiceUnavailable || code == apierror.CodeUnavailable {
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

// Object names the most specific object of r's path under pattern: the
// segment before its last {param}, singular, and the value
// ("/api/v1/hostnames/{id}/records/{record_id}" -> "record:<record_id>").
func Object(pattern string, r *http.Request) string {
	open := strings.LastIndexByte(pattern, '{')
	if open < 0 {
		return ""
	}
	end := strings.IndexByte(pattern[open:], '}')
	if end < 0 {
		return ""
	}
	before := strings.TrimSuffix(pattern[:open], "/")
	kind := strings.TrimSuffix(before[strings.LastIndexByte(before, '/')+1:], "s")
	return kind + ":" + r.PathValue(pattern[open+1:open+end])
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
