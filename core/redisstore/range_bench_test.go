package redisstore_test

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/redisproc"
)

var (
	pagesJobs  = flag.Int("pages.jobs", 1_000_000, "jobs BenchmarkDeepPage seeds")
	pagesTypes = flag.Int("pages.types", 30, "job types BenchmarkDeepPage spreads them over")
)

// BenchmarkDeepPage is a page of 20 jobs deep in the merged index of
// every type, on a Redis of the benchmark's own holding -pages.jobs jobs
// (1M) over -pages.types types (30), inactive, of three priorities:
//
//   - "position, every type": the old way to the last page,
//     positions n-20..n-1, which service now refuses (a range of every
//     type reads by position up to core.MaxUntypedPosition). It reads each
//     index from its start, so it costs in proportion to the offset.
//   - "cursor, every type": the page after a place at 90% of the index,
//     in every state's index (score = id) and in inactive's (score =
//     priority: long runs of equal scores, the place found by binary
//     search among them).
//   - "5 at once": five such pages from five goroutines; one op is all
//     five, so B/op is what five pages cost together.
//   - "position, one type": the page at 90% of one type's index, which
//     Redis reads by rank, for comparison.
//
// B/op is the memory one op allocates in the store (core's side of a
// range; the reply's encoding adds the 20 jobs' JSON). Seeding 1M jobs
// takes a minute or two and about 1 GB of Redis:
//
//	go test ./core/redisstore -run '^$' -bench DeepPage -benchtime 20x
func BenchmarkDeepPage(b *testing.B) {
	ctx := context.Background()
	srv, err := redisproc.Start(ctx, redisproc.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = srv.Stop() })
	rdb, err := redisstore.Dial(srv.URL())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = rdb.Close() })
	st, err := redisstore.New(redisstore.Config{Client: rdb, Prefix: "pages"})
	if err != nil {
		b.Fatal(err)
	}
	n, types := *pagesJobs, *pagesTypes
	seedPages(b, st, n, types)

	// Places at 90%: from a page by rank of one type, whose job sits about
	// as deep in the merged index.
	deep := int64(n/types) * 9 / 10
	placeOf := func(state core.State) *core.RangeCursor {
		page, err := st.Range(ctx, &service.RangeParams{State: state, Type: "t0", From: deep, To: deep})
		if err != nil || len(page.Places) != 1 {
			b.Fatalf("a place of %q at %d: %v", state, deep, err)
		}
		return &page.Places[0]
	}
	cursorPage := func(state core.State, after *core.RangeCursor) error {
		page, err := st.Range(ctx, &service.RangeParams{State: state, Limit: 20, After: after})
		if err == nil && len(page.Jobs) != 20 {
			err = fmt.Errorf("%d jobs, not 20", len(page.Jobs))
		}
		return err
	}
	run := func(name string, op func() error) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := op(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}

	run("position, every type, last page", func() error {
		_, err := st.Range(ctx, &service.RangeParams{From: int64(n) - 20, To: int64(n) - 1})
		return err
	})
	for _, state := range []core.State{"", core.StateInactive} {
		place := placeOf(state)
		name := cmp.Or(string(state), "every state")
		run("cursor, every type, "+name, func() error { return cursorPage(state, place) })
		run("cursor, every type, "+name+", 5 at once", func() error {
			return together(5, func() error { return cursorPage(state, place) })
		})
	}
	run("position, one type, 90%", func() error {
		_, err := st.Range(ctx, &service.RangeParams{Type: "t0", From: deep, To: deep + 19})
		return err
	})
}

// seedPages creates n jobs over types t0..t<types-1>, in creates of 1000
// from two goroutines.
func seedPages(b *testing.B, st *redisstore.Store, n, types int) {
	b.Helper()
	ctx := context.Background()
	var next atomic.Int64
	const batch = 1000
	err := together(2, func() error {
		for from := next.Add(batch) - batch; from < int64(n); from = next.Add(batch) - batch {
			specs := make([]core.Spec, 0, batch)
			for i := int(from); i < min(int(from)+batch, n); i++ {
				specs = append(specs, core.Spec{Type: "t" + strconv.Itoa(i%types), MaxAttempts: 1, TTL: 60_000 * time.Millisecond,
					Priority: core.Priority([]int{0, -10, 10}[i%3]), Data: []byte(`{"n":` + strconv.Itoa(i) + `}`)})
			}
			if _, _, err := st.Create(ctx, 1, specs); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatalf("seed: %v", err)
	}
}

// together runs fn from k goroutines at once and returns the first error.
func together(k int, fn func() error) error {
	errs := make(chan error, k)
	var wg sync.WaitGroup
	for range k {
		wg.Go(func() { errs <- fn() })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
