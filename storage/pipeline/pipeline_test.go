package pipeline

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// Writes of one key run in the order they came, never in two batches at
// once, in batches no larger than the size; every write is answered once.
func TestLanesKeepOrder(t *testing.T) {
	for _, lanes := range []int{1, 2, 4} {
		t.Run(fmt.Sprint(lanes), func(t *testing.T) {
			var (
				mu      sync.Mutex
				ran     = map[string][]int{}
				running = map[string]bool{}
				largest int
			)
			p := New(lanes, 5, func(batch []*Part[[2]int, int]) {
				mu.Lock()
				keys := map[string]bool{}
				for _, part := range batch {
					keys[fmt.Sprint(part.Write[0])] = true
				}
				for k := range keys {
					if running[k] {
						t.Errorf("key %s in two batches at once", k)
					}
					running[k] = true
				}
				largest = max(largest, len(batch))
				mu.Unlock()
				time.Sleep(time.Millisecond)
				mu.Lock()
				for _, part := range batch {
					k := fmt.Sprint(part.Write[0])
					ran[k] = append(ran[k], part.Write[1])
				}
				for k := range keys {
					running[k] = false
				}
				mu.Unlock()
				for _, part := range batch {
					part.Answer(part.Write[1])
				}
			})
			const keys, each = 8, 20
			var wg sync.WaitGroup
			for k := range keys {
				wg.Go(func() { // two callers a key: the first's writes in order
					for i := range each {
						p.Do(context.Background(), fmt.Sprint(k), [2]int{k, 1000 + i})
					}
				})
				wg.Go(func() {
					for i := range each {
						if r, ok := p.Do(context.Background(), fmt.Sprint(k), [2]int{k, i}); !ok || r != i {
							t.Errorf("key %d write %d answered %d, %v", k, i, r, ok)
						}
					}
				})
			}
			wg.Wait()
			for k := range keys {
				got := slices.DeleteFunc(ran[fmt.Sprint(k)], func(i int) bool { return i >= 1000 })
				if !slices.IsSorted(got) || len(got) != each {
					t.Errorf("key %d ran %v", k, got)
				}
			}
			if largest > 5 {
				t.Errorf("a batch of %d, over the size 5", largest)
			}
			if len(p.keys) != 0 {
				t.Errorf("%d keys left in flight", len(p.keys))
			}
		})
	}
}

// A caller that leaves before a batch takes its write is told at once and
// the write never runs; one whose write was taken waits for its answer.
func TestCallerLeaves(t *testing.T) {
	release := make(chan struct{})
	var (
		mu  sync.Mutex
		ran []string
	)
	p := New(1, 10, func(batch []*Part[string, string]) {
		for _, part := range batch {
			mu.Lock()
			ran = append(ran, part.Write)
			mu.Unlock()
			if part.Write == "first" {
				<-release
			}
			part.Answer(part.Write)
		}
	})
	firstDone := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		defer close(firstDone)
		if r, ok := p.Do(ctx, "k", "first"); !ok || r != "first" {
			t.Errorf("the taken write answered %q, %v", r, ok)
		}
	}()
	for { // until the batch has it
		mu.Lock()
		n := len(ran)
		mu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	left := make(chan bool)
	go func() {
		_, ok := p.Do(ctx, "k", "second")
		left <- ok
	}()
	time.Sleep(10 * time.Millisecond)
	cancel()
	if ok := <-left; ok {
		t.Error("a caller that left before its write was taken was answered as run")
	}
	close(release)
	<-firstDone
	if r, ok := p.Do(context.Background(), "k", "third"); !ok || r != "third" {
		t.Errorf("after: %q, %v", r, ok)
	}
	if !slices.Equal(ran, []string{"first", "third"}) {
		t.Errorf("ran %v, want first and third", ran)
	}
}

// A lane fills its next batch before another lane opens: callers fewer
// than a batch's size share one lane's batches, more spill to the next.
func TestLanesFillInTurn(t *testing.T) {
	var (
		mu      sync.Mutex
		largest int
	)
	release := make(chan struct{})
	p := New(2, 4, func(batch []*Part[int, int]) {
		<-release
		mu.Lock()
		largest = max(largest, len(batch))
		mu.Unlock()
		for _, part := range batch {
			part.Answer(0)
		}
	})
	var wg sync.WaitGroup
	for k := range 10 { // one running in each lane, then 4 waiting in each
		wg.Go(func() { p.Do(context.Background(), fmt.Sprint(k), k) })
		time.Sleep(2 * time.Millisecond)
	}
	p.mu.Lock()
	waiting := []int{len(p.lanes[0].waiting), len(p.lanes[1].waiting)}
	p.mu.Unlock()
	close(release)
	wg.Wait()
	if waiting[0] != 4 || waiting[1] != 4 {
		t.Errorf("lanes waiting %v, want [4 4]: the first filled, then the second", waiting)
	}
	if largest != 4 {
		t.Errorf("largest batch %d, want 4", largest)
	}
}
