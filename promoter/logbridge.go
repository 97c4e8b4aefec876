package promoter

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// LogIntervalDefault is NodeConfig.LogInterval's default.
const LogIntervalDefault = 10 * time.Second

// logKindsMax bounds the kinds of memberlist line one interval tracks; the
// lines of further kinds share one count per level.
const logKindsMax = 16

// logBridge sends memberlist's log lines ("[WARN] memberlist: ...") to
// slog at their level, at a bounded rate: memberlist writes a line for
// every packet it cannot read, so anyone who reaches the gossip port could
// otherwise fill the log. Of each kind of line (its level and the words
// before the first digit, quote, colon or other punctuation, so the
// address or error detail does not count), the first of an interval is
// written; the others are counted, and when the interval ends one line at
// the same level says how many there were, with the last as a sample.
// So a flood costs at most two lines per kind per interval.
type logBridge struct {
	log   *slog.Logger
	every time.Duration
	now   func() time.Time

	mu     sync.Mutex
	start  time.Time // of the current interval
	counts map[logKind]*logCount
	// lines is how many lines Write took since the bridge began, written
	// or counted: what its output must account for.
	lines int
}

// logKind is a kind of line: its level and leading words.
type logKind struct {
	level slog.Level
	words string
}

type logCount struct {
	dropped int
	last    string
}

func newLogBridge(log *slog.Logger, every time.Duration, now func() time.Time) *logBridge {
	return &logBridge{log: log, every: every, now: now, start: now(), counts: make(map[logKind]*logCount)}
}

// Write takes one line of memberlist's log.Logger.
func (b *logBridge) Write(p []byte) (int, error) {
	level, msg := parseMemberlistLine(p)
	b.mu.Lock()
	b.lines++
	due := b.rollLocked()
	kind := logKind{level, leadingWords(msg)}
	c, seen := b.counts[kind]
	if !seen && len(b.counts) >= logKindsMax {
		kind.words = "" // the shared count of this level
		c, seen = b.counts[kind]
	}
	write := !seen
	if seen {
		c.dropped++
		c.last = msg
	} else {
		b.counts[kind] = &logCount{}
	}
	b.mu.Unlock()
	b.emit(due)
	if write {
		b.log.Log(context.Background(), level, msg)
	}
	return len(p), nil
}

// taken is how many lines Write took since the bridge began.
func (b *logBridge) taken() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lines
}

// flush ends the interval if it is over, writing its counts.
func (b *logBridge) flush() {
	b.mu.Lock()
	due := b.rollLocked()
	b.mu.Unlock()
	b.emit(due)
}

// flushEvery calls flush every interval until ctx ends, then once more,
// so that the count of a flood that stopped is not held back until the
// next line.
func (b *logBridge) flushEvery(ctx context.Context) {
	t := time.NewTicker(b.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			b.mu.Lock()
			due := b.takeLocked()
			b.mu.Unlock()
			b.emit(due)
			return
		case <-t.C:
			b.flush()
		}
	}
}

// rollLocked starts a new interval when the current one is over, and
// returns the counts of the one that ended. b.mu is held.
func (b *logBridge) rollLocked() map[logKind]*logCount {
	now := b.now()
	if now.Sub(b.start) < b.every {
		return nil
	}
	b.start = now
	return b.takeLocked()
}

func (b *logBridge) takeLocked() map[logKind]*logCount {
	due := b.counts
	b.counts = make(map[logKind]*logCount)
	return due
}

// emit writes one line per kind that had lines left unwritten; b.mu is
// not held, since the handler may block.
func (b *logBridge) emit(due map[logKind]*logCount) {
	for kind, c := range due {
		if c.dropped > 0 {
			b.log.Log(context.Background(), kind.level, "more memberlist lines like this were not written",
				"count", c.dropped, "interval", b.every.String(), "last", c.last)
		}
	}
}

// parseMemberlistLine splits "[WARN] memberlist: text" into its level and
// text. A line without a known level is Info.
func parseMemberlistLine(p []byte) (slog.Level, string) {
	line := string(bytes.TrimSpace(p))
	level := slog.LevelInfo
	for _, l := range [...]struct {
		prefix string
		level  slog.Level
	}{{"[DEBUG]", slog.LevelDebug}, {"[INFO]", slog.LevelInfo}, {"[WARN]", slog.LevelWarn}, {"[ERR]", slog.LevelError}} {
		if rest, ok := strings.CutPrefix(line, l.prefix); ok {
			level, line = l.level, strings.TrimSpace(rest)
			break
		}
	}
	return level, strings.TrimPrefix(line, "memberlist: ")
}

// leadingWords is the run of letters and spaces msg starts with, at most
// 64 bytes: "Failed to decode ping request" of "Failed to decode ping
// request: EOF from=10.0.0.1:7946".
func leadingWords(msg string) string {
	end := 0
	for end < len(msg) && end < 64 {
		c := msg[end]
		if c != ' ' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') {
			break
		}
		end++
	}
	return strings.TrimSpace(msg[:end])
}
