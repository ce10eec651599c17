package app

import (
	"net/http"
	"strconv"
	"time"

	"github.com/coredns/coredns/plugin"
	"github.com/hostmint/hostmint/adminapi"
	"github.com/hostmint/hostmint/apierror"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// The application's metrics, named like the plugin's (coredns_hostname_*):
// an operator reads one service. Every metric is documented in README.md
// (Metrics); deploy/grafana charts them.

func counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return promauto.NewCounterVec(prometheus.CounterOpts{Namespace: plugin.Namespace, Subsystem: "hostname", Name: name, Help: help}, labels)
}

// nodesCounter is a counter summed over the open stores.
func nodesCounter(name, help string, f func(*node) int64) prometheus.CounterFunc {
	return promauto.NewCounterFunc(prometheus.CounterOpts{Namespace: plugin.Namespace, Subsystem: "hostname", Name: name, Help: help},
		func() float64 { return float64(sumOf(f)) })
}

func gaugeFunc(name, help string, f func() float64) prometheus.GaugeFunc {
	return promauto.NewGaugeFunc(prometheus.GaugeOpts{Namespace: plugin.Namespace, Subsystem: "hostname", Name: name, Help: help}, f)
}

var (
	_ = gaugeFunc("feed_last_change_id", "The id of the newest change this node has applied.",
		func() float64 { return float64(leastOf(func(b *node) int64 { return b.feed.Applied() })) })
	_ = gaugeFunc("feed_last_change_timestamp_seconds", "When the newest change this node has applied was written (Unix seconds).",
		func() float64 {
			return float64(leastOf(func(b *node) int64 { return b.metrics.lastAt.Load() })) / 1000
		})
	_ = gaugeFunc("feed_last_change_age_seconds", "Seconds since the newest change this node has applied was written.",
		func() float64 {
			if at := leastOf(func(b *node) int64 { return b.metrics.lastAt.Load() }); at > 0 {
				return time.Since(time.UnixMilli(at)).Seconds()
			}
			return 0
		})
	feedLag = promauto.NewHistogram(prometheus.HistogramOpts{Namespace: plugin.Namespace, Subsystem: "hostname",
		Name: "feed_lag_seconds", Help: "From a change's commit (on any node) to this node serving it.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}})
	_ = gaugeFunc("store_up", "1 while this node's change feed reads the store, 0 when its last read failed.",
		func() float64 {
			return float64(leastOf(func(b *node) int64 {
				if b.feed.Err() == nil && b.feed.Loaded() {
					return 1
				}
				return 0
			}))
		})

	_ = gaugeFunc("node_lag_seconds", "How far behind its database's writers this node is (see GET /api/health's lag_seconds).",
		func() float64 {
			return time.Duration(mostOf(func(b *node) int64 { lag, _ := b.feed.Lag(); return int64(lag) })).Seconds()
		})
	_ = gaugeFunc("node_lag_changes", "Changes in this node's database it has not applied yet.",
		func() float64 { return float64(mostOf(func(b *node) int64 { _, n := b.feed.Lag(); return n })) })
	_ = gaugeFunc("node_read_only", "1 on a read-only DNS node (storage ... readonly), 0 on a writer.",
		func() float64 {
			return float64(mostOf(func(b *node) int64 {
				if b.store.ReadOnly() {
					return 1
				}
				return 0
			}))
		})

	_ = gaugeFunc("zones_unservable", "Signed domains whose DNSSEC key this node cannot open (another cert_encryption_key_file): they answer SERVFAIL and the node is not ready.",
		func() float64 { return float64(sumOf(func(b *node) int64 { return int64(len(b.index.Unservable())) })) })

	feedReloads = promauto.NewCounter(prometheus.CounterOpts{Namespace: plugin.Namespace, Subsystem: "hostname",
		Name: "feed_reloads_total", Help: "Full snapshots loaded again because this node fell behind the compacted change feed."})

	apiRequests = counterVec("api_requests_total", "HTTP API requests, by route and status.", "route", "status")
	apiDuration = promauto.NewHistogramVec(prometheus.HistogramOpts{Namespace: plugin.Namespace, Subsystem: "hostname",
		Name: "api_request_duration_seconds", Help: "HTTP API request latency, by route.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}}, []string{"route"})
	authFailures = counterVec("api_auth_failures_total",
		"Requests refused for missing or wrong credentials (401), by the credential the route takes: key, admin, acme-dns, basic.", "credential")
	apiConnsRefused = counterVec("api_connections_refused_total",
		"API connections closed at once, by the limit they were over: address (256 from one address) or total.", "reason")
	rateLimited = counterVec("api_rate_limited_total", "Requests refused by a team's rate limit or cap (RATE_LIMITED), by route.", "route")

	certsByStatus = promauto.NewGaugeVec(prometheus.GaugeOpts{Namespace: plugin.Namespace, Subsystem: "hostname",
		Name: "certificates", Help: "Certificates in the store, by status."}, []string{"status"})
	certSoonest = promauto.NewGauge(prometheus.GaugeOpts{Namespace: plugin.Namespace, Subsystem: "hostname",
		Name: "certificate_expiry_soonest_timestamp_seconds", Help: "When the issued certificate that expires first expires (Unix seconds); 0 if none."})
	certExpiring = promauto.NewGauge(prometheus.GaugeOpts{Namespace: plugin.Namespace, Subsystem: "hostname",
		Name: "certificates_expiring", Help: "Issued certificates that expire within 7 days."})
	certOrders = counterVec("certificate_orders_total",
		"Certificate orders this node completed, by result (issued, failed) and kind (first, renewal).", "result", "kind")

	nsProbes = counterVec("nameserver_probes_total",
		"[P2] Probes of the service's nameservers for pending hostnames, by nameserver and result (served, not_served).", "nameserver", "result")

	_ = promauto.NewCounterFunc(prometheus.CounterOpts{Namespace: plugin.Namespace, Subsystem: "hostname",
		Name: "admin_token_failures_total", Help: "Wrong admin tokens sent to the API or the dashboard's sign-in."},
		func() float64 { return float64(sumOf(func(b *node) int64 { return b.guesses.Failures() })) })
	_ = promauto.NewCounterFunc(prometheus.CounterOpts{Namespace: plugin.Namespace, Subsystem: "hostname",
		Name: "admin_token_throttled_total", Help: "Requests refused (429) because their address sent too many wrong admin tokens."},
		func() float64 { return float64(sumOf(func(b *node) int64 { return b.guesses.Refusals() })) })

	_ = nodesCounter("write_batches_total", "Batches of more than one write that the write pipeline committed in one transaction.",
		func(b *node) int64 { return b.store.PipelineStats().Batches })
	_ = nodesCounter("writes_batched_total", "Writes committed in those batches.",
		func(b *node) int64 { return b.store.PipelineStats().Parts })
	_ = nodesCounter("writes_rerun_alone_total", "Writes run again alone, each its own transaction, after their batch could not commit "+
		"(a rate limit passed by the batch together, a label taken twice).",
		func(b *node) int64 { return b.store.PipelineStats().Alone })

	expiriesRecorded = promauto.NewCounter(prometheus.CounterOpts{Namespace: plugin.Namespace, Subsystem: "hostname",
		Name: "expiries_recorded_total", Help: "[P1] Idle expiries this node recorded as changes, so that secondaries delete the names."})
	auditFailures = promauto.NewCounter(prometheus.CounterOpts{Namespace: plugin.Namespace, Subsystem: "hostname",
		Name: "audit_write_failures_total", Help: "Refused attempts that could not be recorded in the audit log."})
	auditDropped = promauto.NewCounter(prometheus.CounterOpts{Namespace: plugin.Namespace, Subsystem: "hostname",
		Name: "audit_refusals_dropped_total", Help: "Refused attempts not recorded in the audit log: past 60 a minute by one caller on this node."})
)

// observeAPI turns an API request's outcome into metrics.
func observeAPI(o adminapi.Outcome) {
	route := o.Route
	if route == "" {
		route = "other"
	}
	apiRequests.WithLabelValues(route, strconv.Itoa(o.Status)).Inc()
	apiDuration.WithLabelValues(route).Observe(o.Duration.Seconds())
	if o.Status == http.StatusUnauthorized {
		authFailures.WithLabelValues(o.Auth).Inc()
	}
	if o.Code == apierror.CodeRateLimited {
		rateLimited.WithLabelValues(route).Inc()
	}
}

func observeProbe(server string, served bool) {
	result := "served"
	if !served {
		result = "not_served"
	}
	nsProbes.WithLabelValues(server, result).Inc()
}

func observeOrder(issued, renewal bool) {
	result, kind := "issued", "first"
	if !issued {
		result = "failed"
	}
	if renewal {
		kind = "renewal"
	}
	certOrders.WithLabelValues(result, kind).Inc()
}

func init() {
	// Exported at 0 from the start: an alert on them needs the series.
	for _, reason := range []string{"address", "total"} {
		apiConnsRefused.WithLabelValues(reason)
	}
}
