package xfr

import (
	"context"
	"sync"
	"time"

	"github.com/coredns/coredns/plugin/transfer"
)

// notifyDelay gathers a burst of writes into one NOTIFY per zone: the
// first change of a burst waits this long for the rest.
const notifyDelay = 100 * time.Millisecond

// notifier tells the secondaries of the server block's transfer plugin
// that zones changed: every node does, for every change it applies, so a
// secondary hears of a change whichever node it transfers from.
type notifier struct {
	send    func(zone string) error
	mu      sync.Mutex
	pending map[string]bool
	wake    chan struct{}
}

func (n *notifier) touched(zones []string) {
	if len(zones) == 0 {
		return
	}
	n.mu.Lock()
	for _, z := range zones {
		n.pending[z] = true
	}
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

func (n *notifier) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-n.wake:
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(notifyDelay):
		}
		n.mu.Lock()
		zones := n.pending
		n.pending = map[string]bool{}
		n.mu.Unlock()
		n.round(ctx, zones)
	}
}

// notifyParallel is how many zones' NOTIFYs are in flight at once: a
// thousand team domains changed together are told in a few rounds of
// round trips, and a secondary that does not answer (the transfer
// plugin tries three times, 2 s each) holds up a sixteenth of them.
const notifyParallel = 16

// round sends one NOTIFY for each of zones, notifyParallel at a time, and
// returns when all are answered or given up, or once ctx ends and those in
// flight are; changes meanwhile gather for the next round (one NOTIFY per
// zone however many).
func (n *notifier) round(ctx context.Context, zones map[string]bool) {
	work := make(chan string)
	var wg sync.WaitGroup
	for range min(notifyParallel, len(zones)) {
		wg.Go(func() {
			for z := range work {
				if err := n.send(z); err != nil {
					notifies.WithLabelValues("failed").Inc()
					log.Warningf("NOTIFY of %s failed: %v", z, err)
					continue
				}
				notifies.WithLabelValues("sent").Inc()
			}
		})
	}
feed:
	for z := range zones {
		select {
		case work <- z:
		case <-ctx.Done(): // a shutdown does not wait for the rest
			break feed
		}
	}
	close(work)
	wg.Wait()
}

// StartNotify NOTIFYs the secondaries of the server block's transfer plugin
// t, through its Notify, of every change of the zones it may transfer (the
// catalog's included), until stop.
func (x *Transfers) StartNotify(t *transfer.Transfer) (stop func()) {
	n := &notifier{send: t.Notify, pending: map[string]bool{}, wake: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	var catalogSerial uint32 // the feed's goroutine's alone
	stopWatch := x.ix.Watch(func(zones []string) {
		zones = x.ix.Transferable(zones)
		if x.catalogZone != "" {
			if s := x.catalog().serial; s != catalogSerial {
				catalogSerial = s
				zones = append(zones, x.catalogZone)
			}
		}
		n.touched(zones)
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		n.run(ctx)
	}()
	return func() {
		stopWatch()
		cancel()
		<-done
	}
}
