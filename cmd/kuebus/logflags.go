package main

import (
	"flag"
	"io"
	"log/slog"
)

// logFlags are --log-level and --log-format, the log flags of the
// long-running commands that have no config file (dev, worker); a node
// takes the same two settings from its config's log section, or from
// $KUEBUS_LOG_LEVEL and $KUEBUS_LOG_FORMAT.
type logFlags struct {
	level, format string
}

// register adds the two flags to fs; format is the command's default.
func (l *logFlags) register(fs *flag.FlagSet, format string) {
	fs.StringVar(&l.level, "log-level", "info", "log `LEVEL`: debug, info, warn or error")
	fs.StringVar(&l.format, "log-format", format, "log `FORMAT`: text (for people) or json (one object a line, for log collectors)")
}

// logger checks the flags and returns the logger they ask for, writing to w.
func (l *logFlags) logger(w io.Writer) (*slog.Logger, slog.Level, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(l.level)); err != nil {
		return nil, 0, usagef("--log-level: %q is not debug, info, warn or error", l.level)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch l.format {
	case "text":
		return newRedactLogger(slog.NewTextHandler(w, opts)), level, nil
	case "json":
		return newRedactLogger(slog.NewJSONHandler(w, opts)), level, nil
	}
	return nil, 0, usagef("--log-format: %q is not text or json", l.format)
}
