package redisproc

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// passwordBytes is how many random bytes a new password has (it is
// written in hex, twice as many characters).
const passwordBytes = 32

// LoadOrCreatePassword returns the password kept in the file at path. When
// there is no file it creates one (mode 0600, its folder 0700 if missing)
// with a new random password, so that a data folder keeps its password
// across restarts and the data in it stays reachable; a folder from before
// passwords gets one on its next start. A file others may read is made
// 0600. Surrounding white space in the file is ignored; an empty file is
// an error rather than a server without password.
func LoadOrCreatePassword(path string) (string, error) {
	pw, err := readPassword(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return pw, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("redisproc: password file: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return readPassword(path) // another process made it just now
	}
	if err != nil {
		return "", fmt.Errorf("redisproc: password file: %w", err)
	}
	b := make([]byte, passwordBytes)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	pw = hex.EncodeToString(b)
	_, werr := f.WriteString(pw + "\n")
	if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
		_ = os.Remove(path)
		return "", fmt.Errorf("redisproc: password file %s: %w", path, err)
	}
	return pw, nil
}

// readPassword reads an existing password file, tightening its mode to
// 0600 when group or others may read it.
func readPassword(path string) (string, error) {
	info, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		return "", fmt.Errorf("redisproc: password file: %w", err)
	}
	if info.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(path, 0o600); err != nil {
			return "", fmt.Errorf("redisproc: password file %s is readable by others (%v) and cannot be made 0600: %w", path, info.Mode().Perm(), err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("redisproc: password file: %w", err)
	}
	pw := strings.TrimSpace(string(data))
	if pw == "" {
		return "", fmt.Errorf("redisproc: password file %s is empty: write the Redis password in it, or remove it to get a new one", path)
	}
	return pw, nil
}
