package hostname

import (
	"sync"

	"github.com/coredns/coredns/plugin/metrics"
	"github.com/coredns/coredns/request"
	"github.com/hostmint/hostmint/plugin/hostname/coreinternals"
	"github.com/miekg/dns"
)

// rawWriter is how to send packed bytes to w: nil when a plugin before
// this one wrapped w to read the messages it sends (log, cache, dnstap,
// nsid): they get messages. Between the server's writer and this plugin
// may stand only what passes bytes on: CoreDNS's own per-plugin wrapper
// (plugin.NextOrFailure's, which notes the plugin that wrote), and
// prometheus's recorder, which counts and is told the rcode (rec). out is
// w itself, so that each of them sees the write.
func rawWriter(w dns.ResponseWriter) (out dns.ResponseWriter, rec *metrics.Recorder) {
	for inner := w; ; {
		switch rw := inner.(type) {
		case *request.ScrubWriter:
			return w, rec
		case *metrics.Recorder:
			rec, inner = rw, rw.ResponseWriter
		default:
			next, ok := coreinternals.UnwrapPluginWriter(inner)
			if !ok {
				return nil, nil
			}
			inner = next
		}
	}
}

// sendRaw sends b, an answer with rcode, to out (from rawWriter).
func sendRaw(out dns.ResponseWriter, rec *metrics.Recorder, b []byte, rcode int) {
	if rec != nil {
		rec.Rcode = rcode
	}
	out.Write(b)
}

// wireBufs hold a packed answer on its way out: room for any UDP answer
// and its uncompressed form, which packing sizes first.
var wireBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}
