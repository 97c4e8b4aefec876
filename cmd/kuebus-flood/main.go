package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

func main() {
	natsURL := flag.String("nats", "nats://127.0.0.1:4222", "NATS `URL` of the kuebus dev under test")
	pid := flag.Int("pid", 0, "`PID` of the process whose RSS is sampled")
	mode := flag.String("mode", "leases", "leases or subscribers")
	leases := flag.Int("leases", 60_000, "waiting lease requests sent at once (leases)")
	wait := flag.Duration("wait", 20*time.Second, "how long each lease waits for work (leases)")
	subscribers := flag.Int("subscribers", 3, "subscribers to job.> that never read (subscribers)")
	after := flag.Duration("after", 10*time.Second, "how long to go on sampling after the flood")
	flag.Parse()
	if *pid <= 0 {
		fatalf("-pid is required")
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	rss := &sampler{pid: *pid}
	wg.Go(func() { rss.run(stop) })
	nc, err := bus.Connect(*natsURL, "flood-stats")
	if err != nil {
		fatalf("connect: %v", err)
	}
	defer nc.Close()
	client, err := core.NewClient(nc, nil)
	if err != nil {
		fatalf("client: %v", err)
	}
	st := &statsCheck{client: client}
	wg.Go(func() { st.run(stop) })

	start := time.Now()
	switch *mode {
	case "leases":
		floodLeases(*natsURL, *leases, *wait)
	case "subscribers":
		conns := openSubscribers(*natsURL, *subscribers)
		runCommand(flag.Args())
		fmt.Printf("flood done after %s; sampling %s more\n", time.Since(start).Round(time.Millisecond), *after)
		time.Sleep(*after)
		reportSubscribers(conns)
	default:
		fatalf("-mode %q: leases or subscribers", *mode)
	}
	if *mode == "leases" {
		fmt.Printf("flood done after %s; sampling %s more\n", time.Since(start).Round(time.Millisecond), *after)
		time.Sleep(*after)
	}
	close(stop)
	wg.Wait()
	fmt.Printf("RSS of pid %d: peak %.0f MB, at the end %.0f MB (%d samples)\n", *pid, mb(rss.peak.Load()), mb(rss.last.Load()), rss.n.Load())
	fmt.Printf("core stats: %d answered, %d failed, slowest %s\n", st.ok.Load(), st.failed.Load(), time.Duration(st.slowest.Load()).Round(time.Millisecond))
	if st.failed.Load() > 0 {
		fmt.Printf("core stopped answering: %s\n", st.lastErr.Load())
		os.Exit(1)
	}
}

// floodLeases sends n lease requests for a type no one creates, each
// waiting up to wait, as fast as it can over a few connections, and waits
// for every answer (or wait plus 30 s).
func floodLeases(natsURL string, n int, wait time.Duration) {
	const conns = 8
	body, err := bus.Encode(core.LeaseRequest{Types: []string{"flood-nobody"}, Wait: wait.Milliseconds(), Worker: "flood"})
	if err != nil {
		fatalf("encode: %v", err)
	}
	subject := bus.Subjects{}.Core(bus.MethodLease)
	var answered, refused, leased, other atomic.Int64
	done := make(chan struct{})
	var once sync.Once
	count := func(m *nats.Msg) {
		switch code := m.Header.Get(bus.HeaderKuebusCode); code {
		case "":
			leased.Add(1)
		case string(bus.CodeUnavailable):
			refused.Add(1)
		default:
			other.Add(1)
		}
		if answered.Add(1) == int64(n) {
			once.Do(func() { close(done) })
		}
	}
	var ncs []*nats.Conn
	var inboxes []string
	for i := range conns {
		nc, err := bus.Connect(natsURL, fmt.Sprintf("flood-leases-%d", i))
		if err != nil {
			fatalf("connect: %v", err)
		}
		defer nc.Close()
		inbox := nats.NewInbox()
		sub, err := nc.Subscribe(inbox+".*", count)
		if err != nil {
			fatalf("subscribe: %v", err)
		}
		_ = sub.SetPendingLimits(-1, -1) // the harness must not drop answers
		ncs, inboxes = append(ncs, nc), append(inboxes, inbox)
	}
	start := time.Now()
	for i := range n {
		if err := ncs[i%conns].PublishRequest(subject, inboxes[i%conns]+"."+strconv.Itoa(i), body); err != nil {
			fatalf("publish: %v", err)
		}
	}
	for _, nc := range ncs {
		_ = nc.Flush()
	}
	fmt.Printf("%d leases sent in %s\n", n, time.Since(start).Round(time.Millisecond))
	select {
	case <-done:
	case <-time.After(wait + 30*time.Second):
	}
	fmt.Printf("leases answered: %d of %d (%d waited and found nothing, %d unavailable at once, %d other) in %s\n",
		answered.Load(), n, leased.Load(), refused.Load(), other.Load(), time.Since(start).Round(time.Millisecond))
}

// openSubscribers opens n raw NATS connections that subscribe to job.>
// and then never read again: their bytes pile up in the server.
func openSubscribers(natsURL string, n int) []net.Conn {
	u, err := url.Parse(natsURL)
	if err != nil {
		fatalf("url: %v", err)
	}
	var conns []net.Conn
	for i := range n {
		c, err := net.Dial("tcp", u.Host)
		if err != nil {
			fatalf("dial: %v", err)
		}
		if _, err := bufio.NewReader(c).ReadString('\n'); err != nil { // INFO
			fatalf("read INFO: %v", err)
		}
		sub := bus.Subjects{}.Job(bus.EventEnqueue, 1, "x") // job.<event>.<id>.<type>
		wild := sub[:strings.IndexByte(sub, '.')] + ".>"
		fmt.Fprintf(c, "CONNECT {\"verbose\":false,\"pedantic\":false,\"name\":\"flood-sub-%d\"}\r\nSUB %s %d\r\nPING\r\n", i, wild, i+1)
		conns = append(conns, c)
	}
	fmt.Printf("%d subscribers to job.> that never read\n", n)
	return conns
}

// reportSubscribers reads what each subscriber's socket still holds and
// says whether the server had cut it off.
func reportSubscribers(conns []net.Conn) {
	for i, c := range conns {
		var total int64
		buf := make([]byte, 1<<20)
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		var err error
		for {
			var k int
			k, err = c.Read(buf)
			total += int64(k)
			if err != nil {
				break
			}
		}
		state := "still open"
		if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
			state = "cut off by the server (" + err.Error() + ")"
		}
		fmt.Printf("subscriber %d: %s, %.1f MB were waiting in its socket\n", i, state, mb(total))
		_ = c.Close()
	}
}

func runCommand(args []string) {
	if len(args) == 0 {
		fatalf("subscribers needs a command after --")
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		fatalf("%s: %v", args[0], err)
	}
}

type sampler struct {
	pid           int
	peak, last, n atomic.Int64
}

func (s *sampler) run(stop <-chan struct{}) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		if kb := vmRSS(s.pid); kb > 0 {
			s.last.Store(kb << 10)
			s.n.Add(1)
			if kb<<10 > s.peak.Load() {
				s.peak.Store(kb << 10)
			}
		}
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

// vmRSS is the VmRSS of pid in kB, 0 when it cannot be read.
func vmRSS(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb
		}
	}
	return 0
}

type statsCheck struct {
	client     *core.Client
	ok, failed atomic.Int64
	slowest    atomic.Int64
	lastErr    atomic.Value
}

func (s *statsCheck) run(stop <-chan struct{}) {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		start := time.Now()
		_, err := s.client.Stats(ctx)
		cancel()
		if took := int64(time.Since(start)); took > s.slowest.Load() {
			s.slowest.Store(took)
		}
		if err != nil {
			s.failed.Add(1)
			s.lastErr.Store(err.Error())
		} else {
			s.ok.Add(1)
		}
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

func mb(b int64) float64 { return float64(b) / 1e6 }

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "flood: "+format+"\n", args...)
	os.Exit(2)
}
