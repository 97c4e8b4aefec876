package outbox_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
)

// pgServer is a PostgreSQL server the suite started in a folder of its
// own (Debian's postgresql package), on a free loopback port.
type pgServer struct {
	dir  string
	port int
	cmd  *exec.Cmd
	done chan error
}

// pgBin finds a PostgreSQL program: Debian keeps them in
// /usr/lib/postgresql/<version>/bin, off PATH; the newest version wins.
func pgBin(name string) (string, error) {
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name)
	slices.SortFunc(found, func(a, b string) int {
		va, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(a))))
		vb, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(b))))
		return vb - va
	})
	if len(found) > 0 {
		return found[0], nil
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("no %s in /usr/lib/postgresql/*/bin or PATH: install Debian's postgresql (scripts/install-deps.sh --postgres)", name)
}

// asPostgres makes cmd run as the postgres user when this process is
// root: initdb and postgres refuse to run as root.
func asPostgres(cmd *exec.Cmd, dir string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return fmt.Errorf("running as root and no postgres user to run PostgreSQL as: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Chown(p, uid, gid)
	}); err != nil {
		return err
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	return nil
}

// startPostgres runs initdb in a new temporary folder and starts postgres
// there, listening on 127.0.0.1 at a free port and on a unix socket in the
// folder, and waits until it answers.
func startPostgres(ctx context.Context) (*pgServer, error) {
	initdb, err := pgBin("initdb")
	if err != nil {
		return nil, err
	}
	postgres, err := pgBin("postgres")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "kuebus-outbox-pg-")
	if err != nil {
		return nil, err
	}
	s := &pgServer{dir: dir, done: make(chan error, 1)}
	data := filepath.Join(dir, "data")
	ini := exec.CommandContext(ctx, initdb, "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync")
	if err := asPostgres(ini, dir); err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	if out, err := ini.CombinedOutput(); err != nil {
		return nil, errors.Join(fmt.Errorf("initdb: %v\n%s", err, out), os.RemoveAll(dir))
	}
	if s.port, err = freePort(); err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	s.cmd = exec.Command(postgres, "-D", data, "-k", dir, "-h", "127.0.0.1", "-p", strconv.Itoa(s.port),
		// A test database: nothing has to survive a crash of the machine.
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=200")
	log, err := os.Create(filepath.Join(dir, "postgres.log"))
	if err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	defer func() { _ = log.Close() }()
	s.cmd.Stdout, s.cmd.Stderr = log, log
	if err := asPostgres(s.cmd, dir); err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	if err := s.cmd.Start(); err != nil {
		return nil, errors.Join(fmt.Errorf("start postgres: %w", err), os.RemoveAll(dir))
	}
	// No goroutine waits for it yet: nodetest.Main checks for leaked
	// goroutines before TestMain stops the server.
	if err := s.waitReady(ctx); err != nil {
		out, _ := os.ReadFile(filepath.Join(dir, "postgres.log"))
		return nil, errors.Join(fmt.Errorf("%w\n%s", err, out), s.stop())
	}
	return s, nil
}

// waitReady polls the server until it accepts a query: its readiness is
// external state, with no signal to wait on.
func (s *pgServer) waitReady(ctx context.Context) error {
	db, err := sql.Open("pgx", s.dsn("postgres"))
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		err := db.PingContext(pctx)
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres does not answer after 60s: %w", err)
		}
		time.Sleep(50 * time.Millisecond) // a poll of external state, not a synchronisation
	}
}

func (s *pgServer) dsn(database string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, database)
}

// stop asks postgres for a fast shutdown (SIGINT), waits for it, and
// removes its folder.
func (s *pgServer) stop() error {
	var err error
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGINT)
		go func() { s.done <- s.cmd.Wait() }()
		select {
		case <-s.done:
		case <-time.After(30 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
			err = errors.New("postgres did not stop within 30s of SIGINT: killed")
		}
	}
	return errors.Join(err, os.RemoveAll(s.dir))
}

// freePort is a TCP port on 127.0.0.1 that nothing listened on a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}
