package sign

import (
	"github.com/coredns/coredns/plugin"
	clog "github.com/coredns/coredns/plugin/pkg/log"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

var log = clog.NewWithPlugin("hostname")

// made counts the signatures made: an answer from the cache makes none.
var made = promauto.NewCounter(prometheus.CounterOpts{Namespace: plugin.Namespace, Subsystem: "hostname",
	Name: "signatures_total", Help: "RRSIGs made (answers from the signature cache make none)."})
