package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// procs starts and stops the child processes of one run. Every pid it
// starts goes into the pid file first thing, so that scripts/chaos.sh can
// kill them even when the driver itself is killed.
type procs struct {
	dir     string
	pidFile *os.File

	mu   sync.Mutex // guards live
	live map[*proc]struct{}
}

// proc is one child process; done closes when it has exited and been reaped.
type proc struct {
	name string
	log  string // its stdout and stderr, appended across restarts
	cmd  *exec.Cmd
	done chan struct{}
}

func newProcs(dir string) (*procs, error) {
	f, err := os.OpenFile(filepath.Join(dir, "pids"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("chaos: pid file: %w", err)
	}
	return &procs{dir: dir, pidFile: f, live: map[*proc]struct{}{}}, nil
}

// start runs bin with args, its output appended to <dir>/<name>.log.
func (p *procs) start(name, bin string, args ...string) (*proc, error) {
	logPath := filepath.Join(p.dir, name+".log")
	out, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("chaos: start %s: %w", name, err)
	}
	defer out.Close() // the child holds its own copy
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = out, out
	// Its own process group: a Ctrl-C on the terminal reaches only the
	// driver, which kills the children itself, in its order.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("chaos: start %s: %w", name, err)
	}
	if _, err := fmt.Fprintf(p.pidFile, "%d %s\n", cmd.Process.Pid, name); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("chaos: pid file: %w", err)
	}
	pr := &proc{name: name, log: logPath, cmd: cmd, done: make(chan struct{})}
	p.mu.Lock()
	p.live[pr] = struct{}{}
	p.mu.Unlock()
	go func() { // owned by done: kill and stopAll wait on it
		_ = cmd.Wait()
		p.mu.Lock()
		delete(p.live, pr)
		p.mu.Unlock()
		close(pr.done)
	}()
	return pr, nil
}

// kill sends SIGKILL and waits until the process is gone.
func (pr *proc) kill() {
	_ = pr.cmd.Process.Signal(syscall.SIGKILL)
	<-pr.done
}

// signal sends sig (SIGSTOP, SIGCONT) to a running process.
func (pr *proc) signal(sig syscall.Signal) error {
	if err := pr.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("chaos: signal %s to %s: %w", sig, pr.name, err)
	}
	return nil
}

func (pr *proc) pid() int { return pr.cmd.Process.Pid }

// stopAll kills every child still running and waits for each.
func (p *procs) stopAll() {
	p.mu.Lock()
	all := make([]*proc, 0, len(p.live))
	for pr := range p.live {
		all = append(all, pr)
	}
	p.mu.Unlock()
	for _, pr := range all {
		_ = pr.cmd.Process.Signal(syscall.SIGCONT) // a stopped Redis dies as well
		pr.kill()
	}
}

func (p *procs) close() {
	p.stopAll()
	_ = p.pidFile.Close()
}

// freePort returns a port free on 127.0.0.1 for both TCP and UDP
// (memberlist needs both).
func freePort() (int, error) {
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("chaos: free port: %w", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		u, err := net.ListenPacket("udp", fmt.Sprintf("127.0.0.1:%d", port))
		_ = l.Close()
		if err == nil {
			_ = u.Close()
			return port, nil
		}
	}
	return 0, errors.New("chaos: free port: none free for both TCP and UDP after 20 tries")
}

// logSize is where a log ends now: waitLogLine reads from there, so a
// restarted process's old ready line does not count.
func logSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// waitLogLine waits until the process's log, past offset, has a line
// containing want. The child's log is the only signal a separate process
// gives, so this polls it.
func waitLogLine(ctx context.Context, pr *proc, offset int64, want string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if found, err := logHas(pr.log, offset, want); err != nil || found {
			return err
		}
		select {
		case <-pr.done:
			return fmt.Errorf("chaos: %s exited before %q (see %s)", pr.name, want, pr.log)
		case <-ctx.Done():
			return fmt.Errorf("chaos: %s: no %q in its log (see %s): %w", pr.name, want, pr.log, ctx.Err())
		case <-tick.C:
		}
	}
}

func logHas(path string, offset int64, want string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, fmt.Errorf("chaos: read log: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(offset, 0); err != nil {
		return false, fmt.Errorf("chaos: read log: %w", err)
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if strings.Contains(sc.Text(), want) {
			return true, nil
		}
	}
	return false, nil
}
