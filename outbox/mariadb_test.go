package outbox_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	_ "github.com/go-sql-driver/mysql"
)

// mariaServer is a MariaDB server the suite started in a folder of its own
// (Debian's mariadb-server), on a unix socket there and a free loopback
// port.
type mariaServer struct {
	dir  string
	sock string
	cmd  *exec.Cmd
	done chan error
}

// asMySQL makes cmd run as the mysql user the package creates when this
// process is root, as PostgreSQL's programs run as postgres.
func asMySQL(cmd *exec.Cmd, dir string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup("mysql")
	if err != nil {
		return fmt.Errorf("running as root and no mysql user to run MariaDB as: %w", err)
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

func mariaBin(name string, dirs ...string) (string, error) {
	for _, d := range dirs {
		if p := filepath.Join(d, name); fileExists(p) {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("no %s: install Debian's mariadb-server (scripts/install-deps.sh --mariadb)", name)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// startMariaDB installs a data folder and starts mariadbd on it, and waits
// until it answers. Root connects over the socket without a password.
func startMariaDB(ctx context.Context) (*mariaServer, error) {
	install, err := mariaBin("mariadb-install-db", "/usr/bin")
	if err != nil {
		return nil, err
	}
	server, err := mariaBin("mariadbd", "/usr/sbin")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "kuebus-outbox-maria-")
	if err != nil {
		return nil, err
	}
	s := &mariaServer{dir: dir, sock: filepath.Join(dir, "mysqld.sock"), done: make(chan error, 1)}
	data := filepath.Join(dir, "data")
	ini := exec.CommandContext(ctx, install, "--no-defaults", "--datadir="+data,
		"--auth-root-authentication-method=normal", "--skip-test-db")
	if err := asMySQL(ini, dir); err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	if out, err := ini.CombinedOutput(); err != nil {
		return nil, errors.Join(fmt.Errorf("mariadb-install-db: %v\n%s", err, out), os.RemoveAll(dir))
	}
	port, err := freePort()
	if err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	s.cmd = exec.Command(server, "--no-defaults", "--datadir="+data, "--socket="+s.sock,
		"--port="+strconv.Itoa(port), "--bind-address=127.0.0.1", "--pid-file="+filepath.Join(dir, "mariadb.pid"),
		"--log-error="+filepath.Join(dir, "mariadb.log"),
		// A test database: nothing has to survive a crash of the machine.
		"--innodb-flush-log-at-trx-commit=0", "--innodb-doublewrite=0", "--skip-log-bin",
		"--max-connections=300")
	if err := asMySQL(s.cmd, dir); err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	if err := s.cmd.Start(); err != nil {
		return nil, errors.Join(fmt.Errorf("start mariadbd: %w", err), os.RemoveAll(dir))
	}
	if err := s.waitReady(ctx); err != nil {
		out, _ := os.ReadFile(filepath.Join(dir, "mariadb.log"))
		return nil, errors.Join(fmt.Errorf("%w\n%s", err, out), s.stop())
	}
	return s, nil
}

// waitReady polls the server until it accepts a query: its readiness is
// external state, with no signal to wait on.
func (s *mariaServer) waitReady(ctx context.Context) error {
	db, err := sql.Open("mysql", s.dsn(""))
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
			return fmt.Errorf("mariadbd does not answer after 60s: %w", err)
		}
		time.Sleep(50 * time.Millisecond) // a poll of external state, not a synchronisation
	}
}

func (s *mariaServer) dsn(database string) string {
	return "root@unix(" + s.sock + ")/" + database
}

// stop asks mariadbd to shut down (SIGTERM), waits for it, and removes its
// folder.
func (s *mariaServer) stop() error {
	var err error
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		go func() { s.done <- s.cmd.Wait() }()
		select {
		case <-s.done:
		case <-time.After(60 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
			err = errors.New("mariadbd did not stop within 60s of SIGTERM: killed")
		}
	}
	return errors.Join(err, os.RemoveAll(s.dir))
}
