package app

import (
	"testing"
	"time"

	"github.com/hostmint/hostmint/adminapi"
)

// The per-request cost of the API metrics.
func BenchmarkObserveAPI(b *testing.B) {
	o := adminapi.Outcome{Route: "PUT /api/v1/hostnames/{id}", Auth: "key", Status: 200, Duration: 3 * time.Millisecond}
	for b.Loop() {
		observeAPI(o)
	}
}
