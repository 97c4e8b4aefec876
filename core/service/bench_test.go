package service_test

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/bustest"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// BenchmarkCreateSequential: one producer, each create awaited.
func BenchmarkCreateSequential(b *testing.B) {
	c := nodetest.NewCore(b, service.Config{})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.Client.CreateSpec(ctx, core.Spec{Type: "bench", Data: []byte(`{"i":1}`)}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
}

// BenchmarkCreateParallel: producers on every P.
func BenchmarkCreateParallel(b *testing.B) {
	c := nodetest.NewCore(b, service.Config{})
	b.SetParallelism(8) // 16 producers on 2 cores, as peerbench's conc16
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Client.CreateSpec(ctx, core.Spec{Type: "bench", Data: []byte(`{"i":1}`)}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
}

// BenchmarkLeaseOneParallel: 16 workers, each leasing one job per call of
// one type, as HTTP pop clients or workers of concurrency 1 do.
func BenchmarkLeaseOneParallel(b *testing.B) {
	c := nodetest.NewCore(b, service.Config{})
	specs := make([]core.Spec, 1000)
	for i := range specs {
		specs[i] = core.Spec{Type: "bench"}
	}
	for n := 0; n < b.N; n += len(specs) {
		if _, err := c.Client.CreateBulk(ctx, specs); err != nil {
			b.Fatal(err)
		}
	}
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Client.Lease(ctx, core.LeaseRequest{Types: []string{"bench"}, Max: 1}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "leases/s")
}

// BenchmarkCompleteBatch: a worker's acknowledgements, 64 completes a
// batch, of jobs removed as they complete (as kuebus bench's process
// phase makes them). heard: someone listens to complete events, so each
// complete reads the job back for its event; unheard: nobody does, and
// the complete is bare (service.StoreOp.Bare).
func BenchmarkCompleteBatch(b *testing.B) {
	for _, heard := range []bool{true, false} {
		name := map[bool]string{true: "heard", false: "unheard"}[heard]
		b.Run(name, func(b *testing.B) {
			c := nodetest.NewCore(b, service.Config{Listening: func(string) bool { return heard }})
			specs := make([]core.Spec, 1000)
			for i := range specs {
				specs[i] = core.Spec{Type: "bench", RemoveOnComplete: core.RemoveAtOnce}
			}
			var ops []core.LeaseOp
			for len(ops) < b.N {
				if _, err := c.Client.CreateBulk(ctx, specs); err != nil {
					b.Fatal(err)
				}
				jobs, err := c.Client.Lease(ctx, core.LeaseRequest{Types: []string{"bench"}, Max: len(specs)})
				if err != nil {
					b.Fatal(err)
				}
				for _, j := range jobs {
					ops = append(ops, core.LeaseOp{Op: core.OpComplete, ID: j.ID, Lease: j.Lease, Type: j.Type})
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for from := 0; from < b.N; from += 64 {
				if _, err := c.Client.Batch(ctx, ops[from:min(from+64, b.N)]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "completes/s")
		})
	}
}

// BenchmarkWaitingLeaseMemory measures what one waiting lease costs the
// process that runs core and its embedded NATS server (as `kuebus dev` and
// a node with the nats and core roles do): each op is one lease that
// finds nothing and waits. Run it with a fixed count, as the docs' figure
// was taken:
//
//	go test ./core/service -run XXX -bench WaitingLeaseMemory -benchtime 10000x
//
// It reports, per waiting lease, the live heap (after a GC) and the
// goroutine stacks that the waiting leases hold, the memory the Go
// runtime got from the OS for them (Sys), and what the resident set grew
// by (RSS, on Linux; before the collection that the heap figure needs, so
// that the garbage the leases left counts, as in a running core). The leases
// come from another connection as a worker's would, published with a
// reply subject nobody reads, so that the asker's own memory is not
// counted.
func BenchmarkWaitingLeaseMemory(b *testing.B) {
	var parked atomic.Int64
	all := make(chan struct{})
	target := int64(b.N)
	c := nodetest.NewCore(b, service.Config{MaxWaitingLeases: b.N, OnLeaseWait: func([]string) {
		if parked.Add(1) == target {
			close(all)
		}
	}})
	nc := bustest.Connect(b, c.NATS.ClientURL())
	body, err := bus.Encode(core.LeaseRequest{Types: []string{"idle"}, Max: 8, Worker: "host-12345-0123456789abcdef", Wait: core.MaxLeaseWait, TTL: 60_000})
	if err != nil {
		b.Fatal(err)
	}
	subject := c.Client.Subjects().Core(bus.MethodLease)
	before, rssBefore := memNow(), rss()
	b.ResetTimer()
	for i := range b.N {
		if err := nc.PublishRequest(subject, "_INBOX.memory."+strconv.Itoa(i), body); err != nil {
			b.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		b.Fatal(err)
	}
	select {
	case <-all:
	case <-time.After(time.Minute):
		b.Fatalf("%d of %d leases waiting after a minute", parked.Load(), b.N)
	}
	b.StopTimer()
	rssAfter, after := rss(), memNow()
	n := float64(b.N)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "heap-B/lease")
	b.ReportMetric(float64(after.StackInuse-before.StackInuse)/n, "stack-B/lease")
	b.ReportMetric(float64(after.Sys-before.Sys)/n, "sys-B/lease")
	if rssBefore > 0 && rssAfter > 0 {
		b.ReportMetric(float64(rssAfter-rssBefore)/n, "rss-B/lease")
	}
}

// rss is the process's resident set in bytes (Linux: /proc/self/statm),
// 0 where it cannot be read.
func rss() int64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(data))
	if len(fields) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(fields[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}

// memNow is the runtime's memory statistics after a full collection.
func memNow() runtime.MemStats {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m
}
