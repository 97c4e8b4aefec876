//go:build !linux

package redisproc

import (
	"errors"
	"os"
	"syscall"
)

// sysProcAttr returns the process attributes of a redis-server child.
// Outside Linux there is no Pdeathsig, and Setpgid does not exist on every
// platform, so the child runs with default attributes: a parent that is
// killed may leave redis-server running there. See procattr_linux.go.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// killProcess sends SIGKILL (or its platform equivalent) to redis-server.
func killProcess(p *os.Process) error {
	if err := p.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}
