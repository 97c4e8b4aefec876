package bus_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
)

func TestValidToken(t *testing.T) {
	cases := []struct {
		name  string
		token string
		ok    bool
	}{
		{"a plain word is a token", "email", true},
		{"dashes, underscores and digits are allowed", "send-mail_2", true},
		{"128 characters is the longest", strings.Repeat("a", 128), true},
		{"empty is refused", "", false},
		{"a dot would split the subject", "a.b", false},
		{"a space is refused", "a b", false},
		{"a star is a wildcard", "a*", false},
		{"a greater-than is a wildcard", ">", false},
		{"a tab is refused", "a\tb", false},
		{"non-ASCII is refused", "émail", false},
		{"129 characters is too long", strings.Repeat("a", 129), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := bus.ValidToken(c.token)
			if c.ok {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
			}
		})
	}
}

func TestSubjectsWithAndWithoutPrefix(t *testing.T) {
	plain, err := bus.NewSubjects("")
	require.NoError(t, err)
	require.Equal(t, "core.create", plain.Core(bus.MethodCreate))
	require.Equal(t, "job.complete.42.email", plain.Job(bus.EventComplete, 42, "email"))
	require.Equal(t, "queue.leader", plain.Queue(bus.QueueLeader))
	require.Equal(t, "job.*.42.*", plain.JobEvents(42))
	require.Equal(t, "job.complete.*.*", plain.JobEventsOf(bus.EventComplete, ""))
	require.Equal(t, "job.*.*.email", plain.JobEventsOf("", "email"))
	require.Equal(t, "job.cancel.*.email", plain.JobCancels([]string{"email"}))
	require.Equal(t, "job.cancel.*.*", plain.JobCancels([]string{"email", "sms"}))

	acme, err := bus.NewSubjects("acme.prod.")
	require.NoError(t, err)
	require.Equal(t, "acme.prod", acme.Prefix())
	require.Equal(t, "acme.prod.core.get", acme.Core(bus.MethodGet))
	require.Equal(t, "acme.prod.job.>", acme.AllJobEvents())
	require.Equal(t, "acme.prod.cluster.status", acme.ClusterStatus())

	for _, bad := range []string{"a b", "a.*", ">", "a..b"} {
		_, err := bus.NewSubjects(bad)
		require.Error(t, err, "prefix %q", bad)
	}
}

func TestPatternChecksTokens(t *testing.T) {
	s, _ := bus.NewSubjects("p")
	got, err := s.Pattern("job.complete.>")
	require.NoError(t, err)
	require.Equal(t, "p.job.complete.>", got)
	for _, bad := range []string{"job.>.x", "job..x", "job.a b", ""} {
		_, err := s.Pattern(bad)
		require.Error(t, err, "pattern %q", bad)
	}
}

func TestParseJobUndoesJob(t *testing.T) {
	s, _ := bus.NewSubjects("x")
	ev, id, typ, err := s.ParseJob(s.Job(bus.EventProgress, 7, "resize"))
	require.NoError(t, err)
	require.Equal(t, []any{"progress", int64(7), "resize"}, []any{ev, id, typ})
	for _, bad := range []string{"job.progress.7.resize", "x.job.progress.seven.resize", "x.job.a.1"} {
		_, _, _, err := s.ParseJob(bad)
		require.Error(t, err, bad)
	}
}

// FuzzJobSubject checks that whatever a builder accepts as a token yields a
// subject with exactly the expected tokens, and that ParseJob gets it back.
func FuzzJobSubject(f *testing.F) {
	for _, seed := range []string{"email", "a.b", "a b", "*", ">", "", "x-y_z9"} {
		f.Add(seed, int64(1))
	}
	s, _ := bus.NewSubjects("pre")
	f.Fuzz(func(t *testing.T, typ string, id int64) {
		if bus.ValidToken(typ) != nil {
			_, err := s.Pattern("job.a." + typ)
			if err == nil && typ != "*" && typ != ">" && !strings.Contains(typ, ".") {
				t.Fatalf("Pattern accepted invalid token %q", typ)
			}
			return
		}
		subj := s.Job(bus.EventStart, id, typ)
		if n := strings.Count(subj, "."); n != 4 {
			t.Fatalf("%q has %d dots, want 4", subj, n)
		}
		if strings.ContainsAny(subj, " *>\t\r\n") {
			t.Fatalf("%q contains a wildcard or space", subj)
		}
		ev, gotID, gotType, err := s.ParseJob(subj)
		if err != nil || ev != bus.EventStart || gotID != id || gotType != typ {
			t.Fatalf("ParseJob(%q) = %q %d %q %v", subj, ev, gotID, gotType, err)
		}
	})
}

func FuzzInbox(f *testing.F) {
	for _, seed := range []string{"w1", "a.b", "*", ">", "", "UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4", "_local_core"} {
		f.Add(seed)
	}
	s, _ := bus.NewSubjects("pre")
	other, _ := s.Inbox("other")
	f.Fuzz(func(t *testing.T, id string) {
		inbox, err := s.Inbox(id)
		if (err == nil) != (bus.ValidToken(id) == nil) {
			t.Fatalf("Inbox(%q) error %v disagrees with ValidToken", id, err)
		}
		if err != nil {
			return
		}
		if inbox != "pre._INBOX."+id || strings.ContainsAny(inbox, " *>\t\r\n") || strings.HasSuffix(inbox, ".") {
			t.Fatalf("Inbox(%q) = %q", id, inbox)
		}
		// No user's inbox holds another's: their subscriptions, inbox+".>",
		// never overlap.
		if id != "other" && (strings.HasPrefix(inbox+".", other+".") || strings.HasPrefix(other+".", inbox+".")) {
			t.Fatalf("inbox %q overlaps %q", inbox, other)
		}
	})
}

// TestLoopbackHost: only a loopback IP or "localhost" counts as reachable
// from this machine alone; every interface, a name and "" do not.
func TestLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1": true, "127.0.0.2": true, "::1": true, "localhost": true,
		"0.0.0.0": false, "::": false, "": false, "10.0.0.1": false, "example.com": false, "localhost.": false,
	} {
		if got := bus.LoopbackHost(host); got != want {
			t.Errorf("LoopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}
