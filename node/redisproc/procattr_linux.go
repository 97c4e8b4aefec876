//go:build linux

package redisproc

import (
	"errors"
	"os"
	"syscall"
)

// sysProcAttr returns the process attributes of a redis-server child.
//
// Setpgid puts redis-server in a process group of its own. A Ctrl-C in the
// terminal of `kuebus dev` or of `go test` is sent to the foreground process
// group only, so redis-server does not receive it and the parent stays in
// charge of when and how redis-server stops (after its own users, with
// SIGTERM so that the AOF is flushed). It also lets killProcess take down
// redis-server's fork children (BGSAVE, BGREWRITEAOF) with it.
//
// Pdeathsig makes the kernel send SIGKILL to redis-server when its parent
// goes away, so that a test binary or `kuebus dev` that is killed (or
// panics, or is stopped by a test timeout) does not leave redis-server
// running and holding its port.
//
// Caveat: Pdeathsig fires when the OS thread that forked the child exits,
// not when the process does. The Go runtime only ends a thread when a
// goroutine that called runtime.LockOSThread returns without unlocking it,
// so Start and Restart must not be called from such a goroutine, or
// redis-server is killed as soon as that goroutine ends.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killProcess sends SIGKILL to redis-server's process group (redis-server
// and any fork child of it), falling back to the process alone.
// It must only be called while p has not been reaped yet, so that the group
// id (redis-server's pid) cannot have been reused.
func killProcess(p *os.Process) error {
	if err := syscall.Kill(-p.Pid, syscall.SIGKILL); err == nil {
		return nil
	}
	if err := p.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}
