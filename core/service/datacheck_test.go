package service_test

import (
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// TestDataThatNoReaderCanDecodeIsRefused: data is stored byte for byte, so
// it must be JSON that every reader can decode: valid UTF-8, no lone UTF-16
// surrogate, numbers that fit a float64. Nothing is stored.
func TestDataThatNoReaderCanDecodeIsRefused(t *testing.T) {
	c, _ := newCore(t)
	raw := bus.NewClient(c.NATS.Conn, 5*time.Second)
	subj := c.Client.Subjects()
	cases := []struct{ name, body, want string }{
		{"invalid UTF-8 in a string", "{\"type\":\"e\",\"data\":\"ab\xffcd\"}", "data: not valid UTF-8 (at byte 3)"},
		{"invalid UTF-8 in a key", "{\"type\":\"e\",\"data\":{\"\xc3\":1}}", "data: not valid UTF-8"},
		{"a lone high surrogate", `{"type":"e","data":"\ud800"}`, `data: \ud800 at byte 1 is a lone UTF-16 surrogate`},
		{"a lone low surrogate", `{"type":"e","data":{"k":"x\udfff"}}`, `data: \udfff at byte 7 is a lone UTF-16 surrogate`},
		{"a high surrogate before a non-surrogate", `{"type":"e","data":"\ud800\u0041"}`, `data: \ud800`},
		{"a high surrogate at the end", `{"type":"e","data":["\uD83D"]}`, `data: \ud83d`},
		{"a number over float64", `{"type":"e","data":1e999999}`, "data: the number 1e999999 (at byte 0) does not fit a 64-bit float"},
		{"a negative number over float64", `{"type":"e","data":{"n":[-1.5E400]}}`, "data: the number -1.5E400"},
		{"a bulk job with bad data", `{"jobs":[{"type":"e"},{"type":"e","data":"\udc00"}]}`, `jobs[1].data: \udc00`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			method := bus.MethodCreate
			if tc.name == "a bulk job with bad data" {
				method = bus.MethodCreateBulk
			}
			err := raw.CallRaw(ctx, subj.Core(method), []byte(tc.body), nil)
			require.ErrorIs(t, err, core.ErrInvalid)
			require.ErrorContains(t, err, tc.want)
		})
	}
	st, err := c.Client.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, core.StateCounts{}, st.StateCounts, "nothing was stored")

	// What a reader can decode is kept as sent.
	for _, ok := range []string{`"\ud83d\ude00 é"`, `1e308`, `-1.7976931348623157e308`, `1e-400`, `{"a":[1,2.5,-3e2,"\u00e9\"\\"]}`, `"a\\ud800"`} {
		var job core.Job
		require.NoError(t, raw.CallRaw(ctx, subj.Core(bus.MethodCreate), []byte(`{"type":"e","data":`+ok+`}`), &job), ok)
		got, err := c.Client.Get(ctx, job.ID)
		require.NoError(t, err)
		require.Equal(t, ok, string(got.Data))
	}
}

// TestResultIsCheckedLikeData: a completion with a result no reader could
// decode is refused and leaves the job active.
func TestResultIsCheckedLikeData(t *testing.T) {
	c, _ := newCore(t)
	_, err := c.Client.Create(ctx, "r", nil, nil)
	require.NoError(t, err)
	j := lease(t, c, core.LeaseRequest{Types: []string{"r"}})[0]
	raw := bus.NewClient(c.NATS.Conn, 5*time.Second)
	for body, want := range map[string]string{
		`"result":1e999999`:   "result: the number 1e999999",
		`"result":"\udead"`:   `result: \udead`,
		"\"result\":\"\xfe\"": "result: not valid UTF-8",
	} {
		req := `{"id":` + itoa(j.ID) + `,"lease":"` + j.Lease + `",` + body + `}`
		err := raw.CallRaw(ctx, c.Client.Subjects().Core(bus.MethodComplete), []byte(req), nil)
		require.ErrorIs(t, err, core.ErrInvalid, body)
		require.ErrorContains(t, err, want)
	}
	got, err := c.Client.Get(ctx, j.ID)
	require.NoError(t, err)
	require.Equal(t, core.StateActive, got.State)
}

// TestLogLinesAndErrorsAreStoredAsValidUTF8: line and error are JSON
// strings, which the decoder turns into valid UTF-8 (bad bytes and lone
// surrogates become U+FFFD), so what is stored is always readable.
func TestLogLinesAndErrorsAreStoredAsValidUTF8(t *testing.T) {
	c, _ := newCore(t)
	job, err := c.Client.Create(ctx, "u", nil, &core.CreateOpts{MaxAttempts: 1})
	require.NoError(t, err)
	raw := bus.NewClient(c.NATS.Conn, 5*time.Second)
	subj := c.Client.Subjects()
	require.NoError(t, raw.CallRaw(ctx, subj.Core(bus.MethodAddLog), []byte("{\"id\":"+itoa(job.ID)+",\"line\":\"a\xffb\\ud800c\"}"), nil))
	lines, err := c.Client.Log(ctx, job.ID)
	require.NoError(t, err)
	require.Equal(t, []string{"a\uFFFDb\uFFFDc"}, lines)

	j := lease(t, c, core.LeaseRequest{Types: []string{"u"}})[0]
	req := "{\"id\":" + itoa(j.ID) + ",\"lease\":\"" + j.Lease + "\",\"error\":\"bad \xc3 \\udc00\"}"
	require.NoError(t, raw.CallRaw(ctx, subj.Core(bus.MethodFail), []byte(req), nil))
	got, err := c.Client.Get(ctx, j.ID)
	require.NoError(t, err)
	require.True(t, utf8.ValidString(got.Error))
	require.Equal(t, "bad \uFFFD \uFFFD", got.Error)
}
