package hostname

import (
	"slices"
	"sync"

	"github.com/coredns/coredns/plugin"
	"github.com/hostmint/hostmint/app"
	"github.com/hostmint/hostmint/plugin/hostname/index"
	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Every metric is documented in README.md (Metrics); deploy/grafana charts them.

// The kinds of zone an answer is given from besides the index's
// (index.KindPool, index.KindTeam): outside is a name in no served zone.
const (
	kindOutside = "outside"
	kindCatalog = "catalog"
)

func counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return promauto.NewCounterVec(prometheus.CounterOpts{Namespace: plugin.Namespace, Subsystem: "hostname", Name: name, Help: help}, labels)
}

func gaugeFunc(name, help string, f func() float64) prometheus.GaugeFunc {
	return promauto.NewGaugeFunc(prometheus.GaugeOpts{Namespace: plugin.Namespace, Subsystem: "hostname", Name: name, Help: help}, f)
}

var (
	answersTotal = counterVec("answers_total",
		"Answers given by the hostname plugin, by rcode, query type and kind of zone (pool, team, outside).", "rcode", "type", "kind")
	xfrOut      = counterVec("transfers_total", "Zone transfers served to secondaries, by kind (axfr, also an IXFR's fallback; ixfr: the difference; current: an IXFR of a zone the secondary has).", "kind")
	xfrRefused  = counterVec("transfers_refused_total", "Zone transfers refused, by reason (signed: the zone is signed online; key: a store TSIG key may not transfer the zone).", "reason")
	tsigRefused = counterVec("tsig_refused_total", "Signed messages answered NOTAUTH, by reason (key: unknown, revoked, expired, another algorithm or a closed team's; time: outside the window, at most 300 s; signature: a bad MAC).", "reason")
	rrlVec      = counterVec("rrl_responses_total", "Answers over UDP held back by response_rate_limit, by action (dropped; slipped: sent truncated and empty).", "action")
	updates     = counterVec("updates_total", "DNS UPDATE messages answered (dynamic_update), by rcode (NOERROR: applied; REFUSED: a rule or the key's reach refused it; NOTAUTH: a TSIG or zone error; YXDOMAIN, NXRRSET, ...: a prerequisite failed).", "rcode")
	notifies    = counterVec("notifies_total", "NOTIFYs sent to secondaries for changed zones, by result (sent, failed).", "result")
	_           = gaugeFunc("index_hostnames", "Hostnames in the in-memory index of this node.",
		func() float64 { return float64(app.IndexSize()) })
)

// rrlVec's counters by verdict, made once: they are counted on the answer
// path.
var (
	rrlDropped = rrlVec.WithLabelValues("dropped")
	rrlSlipped = rrlVec.WithLabelValues("slipped")
)

// answerTypes are the query types the answers metric names; every other
// type is "other", so that random types cannot grow the number of series
// without bound.
var answerTypes = [...]uint16{dns.TypeA, dns.TypeAAAA, dns.TypeTXT, dns.TypeCAA, dns.TypeMX, dns.TypeSRV, dns.TypeTLSA,
	dns.TypeSSHFP, dns.TypeHTTPS, dns.TypeSVCB, dns.TypeNS, dns.TypeSOA, dns.TypeDNSKEY, dns.TypeDS, dns.TypeNSEC,
	dns.TypeCNAME, dns.TypeANY, dns.TypePTR}

var (
	answerKinds = [...]string{index.KindPool, index.KindTeam, kindOutside, kindCatalog}
	typeIndex   = map[uint16]int{}
)

func init() {
	// Every kind of transfer and NOTIFY is exported from the start, at 0:
	// a chart or an alert needs no first occurrence.
	for _, k := range []string{"axfr", "ixfr", "current"} {
		xfrOut.WithLabelValues(k)
	}
	for _, r := range []string{"signed", "key"} {
		xfrRefused.WithLabelValues(r)
	}
	for _, r := range []string{"key", "time", "signature"} {
		tsigRefused.WithLabelValues(r)
	}
	for _, r := range []string{"sent", "failed"} {
		notifies.WithLabelValues(r)
	}
	for i, t := range answerTypes {
		typeIndex[t] = i
	}
}

// answerCells hold the counter of each label set, made on first use, so
// that counting an answer is an index, not the hashing of three label
// values (rcodes past 15 take the slow path).
var answerCells [len(answerKinds)][16][len(answerTypes) + 1]struct {
	once sync.Once
	c    prometheus.Counter
}

// countAnswer counts one answer.
func countUpdate(rcode int) { updates.WithLabelValues(dns.RcodeToString[rcode]).Inc() }

func countAnswer(rcode int, qtype uint16, kind string) {
	ti, ok := typeIndex[qtype]
	if !ok {
		ti = len(answerTypes)
	}
	ki := slices.Index(answerKinds[:], kind)
	if ki < 0 || rcode < 0 || rcode >= 16 {
		answersTotal.WithLabelValues(dns.RcodeToString[rcode], typeLabel(qtype), kind).Inc()
		return
	}
	cell := &answerCells[ki][rcode][ti]
	cell.once.Do(func() { cell.c = answersTotal.WithLabelValues(dns.RcodeToString[rcode], typeLabel(qtype), kind) })
	cell.c.Inc()
}

// typeLabel names qtype for the answers metric.
func typeLabel(qtype uint16) string {
	if _, ok := typeIndex[qtype]; ok {
		return dns.TypeToString[qtype]
	}
	return "other"
}
