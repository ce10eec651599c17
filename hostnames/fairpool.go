package hostnames

import "github.com/hostmint/hostmint/storage"

// fairPool decides which due targets start resolving: at most parallel at
// once, at most share of those for one account, accounts taking turns. A
// team whose targets stop answering thus holds share workers, never the
// pool, and the others keep theirs.
//
// It is not safe for concurrent use: the refresh loop alone calls it.
type fairPool struct {
	parallel, share int
	busy            map[string]bool // hostname IDs resolving now
	held            map[string]int  // account ID -> its hostnames resolving now
}

func newFairPool(parallel, share int) *fairPool {
	return &fairPool{parallel: parallel, share: share, busy: map[string]bool{}, held: map[string]int{}}
}

// take starts what it may of queue, one hostname per account in turn (in
// the order the accounts first appear), and returns the started ones and
// the rest in their order. A hostname already resolving is dropped from the
// rest: its outcome moves its refresh time, and it must never resolve
// twice at once.
func (p *fairPool) take(queue []storage.Hostname) (started, rest []storage.Hostname) {
	var accounts []string
	waiting := map[string][]int{} // account ID -> indices into queue
	for i, h := range queue {
		if p.busy[h.ID] {
			continue
		}
		if _, ok := waiting[h.AccountID]; !ok {
			accounts = append(accounts, h.AccountID)
		}
		waiting[h.AccountID] = append(waiting[h.AccountID], i)
	}
	for more := true; more; {
		more = false
		for _, a := range accounts {
			if len(p.busy) >= p.parallel {
				break
			}
			if p.held[a] >= p.share || len(waiting[a]) == 0 {
				continue
			}
			h := queue[waiting[a][0]]
			waiting[a] = waiting[a][1:]
			p.busy[h.ID] = true
			p.held[a]++
			started = append(started, h)
			more = true
		}
	}
	for _, h := range queue {
		if !p.busy[h.ID] {
			rest = append(rest, h)
		}
	}
	return started, rest
}

// release frees the slot of a hostname that take started.
func (p *fairPool) release(h *storage.Hostname) {
	if !p.busy[h.ID] {
		return
	}
	delete(p.busy, h.ID)
	if p.held[h.AccountID]--; p.held[h.AccountID] <= 0 {
		delete(p.held, h.AccountID)
	}
}
