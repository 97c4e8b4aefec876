package service

import (
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/kuebus/kuebus/core"
)

// timing is when a schedule ticks: after(t) is its first tick strictly
// after t (unix ms).
type timing interface {
	after(t int64) int64
}

// cronParser reads 5 fields, 6 with seconds first, and the descriptors
// (@yearly, @monthly, @weekly, @daily, @hourly).
var cronParser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// cronTiming ticks at a cron expression's times in a zone.
type cronTiming struct {
	sched cron.Schedule
	loc   *time.Location
}

func (c cronTiming) after(t int64) int64 {
	next := c.sched.Next(time.UnixMilli(t).In(c.loc))
	if next.IsZero() { // an expression with no time at all, e.g. Feb 30
		return 0
	}
	return next.UnixMilli()
}

// everyTiming ticks every `every` ms from an anchor, itself a tick.
type everyTiming struct {
	anchor, every int64
}

func (e everyTiming) after(t int64) int64 {
	if t < e.anchor {
		return e.anchor
	}
	return e.anchor + ((t-e.anchor)/e.every+1)*e.every
}

// parseTiming checks a schedule's timing, naming the field at fault: one of
// cron and every, tz only with cron. anchor is the tick an every schedule
// counts from. every is in ms, as on the wire.
func parseTiming(cronExpr string, every *int64, tz string, anchor int64) (timing, error) {
	switch {
	case cronExpr == "" && every == nil:
		return nil, core.Invalidf("cron", "missing: give cron or every")
	case cronExpr != "" && every != nil:
		return nil, core.Invalidf("every", "give cron or every, not both")
	case every != nil:
		if *every < core.MinEvery.Milliseconds() || *every > core.MaxDelay {
			return nil, core.Invalidf("every", "%d ms is outside %d..%d", *every, core.MinEvery.Milliseconds(), int64(core.MaxDelay))
		}
		if tz != "" {
			return nil, core.Invalidf("tz", "only a cron schedule has a time zone")
		}
		return everyTiming{anchor: anchor, every: *every}, nil
	}
	if len(cronExpr) > core.MaxCronLen {
		return nil, core.Invalidf("cron", "%d bytes is longer than %d", len(cronExpr), core.MaxCronLen)
	}
	// One way to give a zone: the tz field. robfig's CRON_TZ= prefix and
	// @every would be a second way to say what tz and every say.
	if strings.HasPrefix(cronExpr, "TZ=") || strings.HasPrefix(cronExpr, "CRON_TZ=") {
		return nil, core.Invalidf("cron", "%q: give the time zone in tz, not in the expression", cronExpr)
	}
	if strings.HasPrefix(cronExpr, "@every") {
		return nil, core.Invalidf("cron", "%q: use every (ms) for a fixed interval", cronExpr)
	}
	loc := time.UTC
	if len(tz) > core.MaxTZLen {
		return nil, core.Invalidf("tz", "%d bytes is longer than %d", len(tz), core.MaxTZLen)
	}
	if tz != "" {
		l, err := time.LoadLocation(tz)
		if err != nil || tz == "Local" {
			return nil, core.Invalidf("tz", "%q is not an IANA time zone", tz)
		}
		loc = l
	}
	sched, err := cronParser.Parse(cronExpr)
	if err != nil {
		return nil, core.Invalidf("cron", "%q: %v", cronExpr, err)
	}
	return cronTiming{sched: sched, loc: loc}, nil
}

// latestTick is the last tick of tm at or before now, given from, a tick
// at or before now (the schedule's stored next tick). Ticks missed while
// no leader ran are not walked one by one: it looks back from now over a
// window that doubles until the window holds a tick, so a schedule that
// ticks every second and was left for a year costs a few dozen steps.
func latestTick(tm timing, from, now int64) int64 {
	for window := int64(time.Minute / time.Millisecond); now-window > from; window *= 2 {
		if t := tm.after(now - window); t > 0 && t <= now {
			from = t
			break
		}
	}
	for {
		t := tm.after(from)
		if t <= 0 || t > now {
			return from
		}
		from = t
	}
}
