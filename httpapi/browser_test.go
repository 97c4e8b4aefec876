package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/httpapi"
)

// envArtifacts names the folder the browser test saves its screenshots in;
// unset, it makes a new temporary folder and logs its path.
const envArtifacts = "KUEBUS_TEST_ARTIFACTS"

// chromiumInstall is how to get the browser on Debian, as CI does.
const chromiumInstall = "apt-get install -y chromium"

// findChromium returns the path of Debian's chromium, or "".
func findChromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "/usr/bin/chromium"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	return ""
}

// artifacts returns the folder for this run's screenshots.
func artifacts(t *testing.T) string {
	t.Helper()
	dir := os.Getenv(envArtifacts)
	if dir == "" {
		var err error
		dir, err = os.MkdirTemp("", "kuebus-httpapi-browser-")
		require.NoError(t, err)
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	t.Logf("screenshots in %s (set %s to choose the folder)", dir, envArtifacts)
	return dir
}

// TestDashboardInBrowser drives the dashboard in headless Chromium: it sees a
// job created through the API appear without a reload (the event stream),
// opens a failed job from the failed list, retries it and sees it inactive,
// then pauses and resumes a type from the types table.
func TestDashboardInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED: the browser test (headless Chromium) does not run with -short")
	}
	t.Parallel()
	e := newEnv(t, httpapi.Config{})
	dir := artifacts(t)
	seed(t, e)
	browser, exceptions := newBrowser(t)

	step, shot := stepper(t, browser, dir)

	step("open the dashboard and see it live",
		chromedp.Navigate(e.url+"/"),
		chromedp.WaitVisible(chromedp.CSS(`#list`)),
		chromedp.WaitReady(chromedp.CSS(`body[data-live="1"]`)),
	)
	shot("1-dashboard.png")

	// No reload and no polling: only the event stream can bring it in.
	fresh := e.create(map[string]any{"type": "email", "data": map[string]string{"to": "live@example.com"}, "options": map[string]any{"priority": "high"}})
	step("see a job created through the API appear",
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#list tr[data-id="%d"]`, fresh.ID))))
	step("the delayed job shows when it is due, the running one its worker",
		chromedp.WaitVisible(chromedp.CSS(`#list tr[data-state="delayed"] td.where span[title]`)),
		chromedp.WaitVisible(chromedp.CSS(`#list tr[data-state="active"] td.where span.mono`)),
	)
	shot("2-job-appeared-live.png")

	failed := failJob(t, e, "report", "upstream returned 502")
	step("open the failed job from the failed list",
		// The seed failed one job, this is the second. Once the card says
		// so, the page has caught up with every change.
		chromedp.WaitVisible(chromedp.CSS(`#counts a[data-state="failed"][data-n="2"]`)),
		chromedp.Click(chromedp.CSS(`#counts a[data-state="failed"]`)),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#list[data-state="failed"] tr[data-id="%d"]`, failed.ID))),
		chromedp.Click(chromedp.CSS(fmt.Sprintf(`#list tr[data-id="%d"] a`, failed.ID))),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#job[data-id="%d"][data-state="failed"]`, failed.ID))),
		chromedp.WaitVisible(chromedp.CSS(`#job-error`)),
	)
	shot("3-failed-job.png")

	step("retry it and see it inactive",
		chromedp.Click(chromedp.CSS(`#retry`)),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#job[data-id="%d"][data-state="inactive"]`, failed.ID))),
	)
	shot("4-retried-job.png")
	got, err := e.core.Client.Get(t.Context(), failed.ID)
	require.NoError(t, err)
	require.Equal(t, core.StateInactive, got.State)

	// The cores add their per-minute counts to Redis every few seconds;
	// flush now, and an event makes the page read again.
	e.core.Service.FlushHistory(t.Context())
	e.create(map[string]any{"type": "email"})
	step("the last hour's chart shows completed and failed jobs, and the queue, with axes",
		chromedp.Navigate(e.url+"/#/"),
		chromedp.WaitVisible(chromedp.CSS(`#history-chart[data-range="1h"][data-points="60"]:not([data-completed="0"]):not([data-failed="0"])`)),
		chromedp.WaitVisible(chromedp.CSS(`#chart-jobs .uplot canvas`)),
		chromedp.WaitVisible(chromedp.CSS(`#chart-queue .uplot canvas`)),
	)
	axes := evalIn[int](t, browser, `document.querySelectorAll("#history-chart .u-axis").length`)
	require.Equal(t, 5, axes, "time and jobs; time, waiting and wait p95")
	shot("5-chart.png")
	step("the 7 days range reads hours",
		chromedp.Click(chromedp.CSS(`#history-chart button[data-range="7d"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#history-chart[data-range="7d"][data-step="3600000"][data-points="168"]:not([data-completed="0"])`)),
		chromedp.WaitVisible(chromedp.CSS(`#chart-queue .uplot canvas`)),
	)
	shot("5b-chart-7d.png")
	step("back to the last hour",
		chromedp.Click(chromedp.CSS(`#history-chart button[data-range="1h"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#history-chart[data-range="1h"]`)),
	)

	emailRow := `#types tr[data-type="email"]`
	step("pause a type from the types table and see it paused",
		chromedp.Navigate(e.url+"/#/"),
		chromedp.WaitVisible(chromedp.CSS(emailRow+`[data-paused="0"]`)),
		chromedp.Click(chromedp.CSS(emailRow+` button[data-pause="email"]`)),
		chromedp.WaitVisible(chromedp.CSS(emailRow+`[data-paused="1"] .tag.paused`)),
	)
	shot("6-type-paused.png")
	st, err := e.core.Client.Stats(t.Context())
	require.NoError(t, err)
	require.Equal(t, []string{"email"}, st.Paused)
	step("resume it",
		chromedp.Click(chromedp.CSS(emailRow+` button[data-pause="email"]`)),
		chromedp.WaitVisible(chromedp.CSS(emailRow+`[data-paused="0"]`)),
	)
	st, err = e.core.Client.Stats(t.Context())
	require.NoError(t, err)
	require.Empty(t, st.Paused)

	require.Empty(t, exceptions(), "JavaScript exceptions in the page")
}

// TestDashboardSaysWhenJobsDidNotFitOneReply: three jobs of 400 KB do not
// fit one core reply, so GET /jobs answers two and Kuebus-Range-Next. The
// list says more jobs exist and, when asked, reads and shows the rest.
func TestDashboardSaysWhenJobsDidNotFitOneReply(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED: the browser test (headless Chromium) does not run with -short")
	}
	t.Parallel()
	e := newEnv(t, httpapi.Config{})
	data := json.RawMessage(`"` + strings.Repeat("x", 400<<10) + `"`)
	var ids []int64
	for range 3 {
		j, err := e.core.Client.Create(t.Context(), "big", data, nil)
		require.NoError(t, err)
		ids = append(ids, j.ID)
	}
	browser, exceptions := newBrowser(t)
	ctx, cancel := context.WithTimeout(browser, waitTimeout)
	defer cancel()
	row := func(id int64) chromedp.CSS { return chromedp.CSS(fmt.Sprintf(`#list tr[data-id="%d"]`, id)) }

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(e.url+"/#/jobs/inactive/big"),
		chromedp.WaitVisible(row(ids[0])),
		chromedp.WaitVisible(chromedp.CSS(`#more`)),
	), "the list says more jobs exist")
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#list tbody tr").length`))
	require.NoError(t, err)
	require.Equal(t, 2, rows, "the jobs of the first reply")

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#show-more`)),
		chromedp.WaitVisible(row(ids[2])),
		chromedp.WaitNotPresent(chromedp.CSS(`#more`)),
	), "asked, the list shows the rest")
	require.Empty(t, exceptions(), "JavaScript exceptions in the page")
}

// TestDashboardPagesEveryTypeByCursor: the list of every type pages with
// core's range cursor: Next goes on after the page's last job, Prev comes
// back before its first, and each page shows the jobs one read by
// position lists there.
func TestDashboardPagesEveryTypeByCursor(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED: the browser test (headless Chromium) does not run with -short")
	}
	t.Parallel()
	e := newEnv(t, httpapi.Config{})
	var specs []core.Spec
	for i := range 45 {
		specs = append(specs, core.Spec{Type: fmt.Sprintf("t%d", i%3), Priority: core.Priority(i % 2 * 10)})
	}
	_, err := e.core.Client.CreateBulk(t.Context(), specs)
	require.NoError(t, err)
	whole, err := e.core.Client.Range(t.Context(), core.RangeRequest{State: core.StateInactive, To: 999})
	require.NoError(t, err)
	require.Len(t, whole, 45)
	browser, exceptions := newBrowser(t)
	step, _ := stepper(t, browser, t.TempDir())
	// shows waits until the list's rows are the jobs, in order.
	shows := func(jobs []core.Job) chromedp.Action[chromedp.Void] {
		want := make([]string, len(jobs))
		for i, j := range jobs {
			want[i] = fmt.Sprint(j.ID)
		}
		return chromedp.Poll[chromedp.Void](fmt.Sprintf(
			`Array.from(document.querySelectorAll("#list tbody tr")).map((tr) => tr.dataset.id).join(",") === %q`,
			strings.Join(want, ",")))
	}
	step("the first page, by position",
		chromedp.Navigate(e.url+"/#/jobs/inactive/all"),
		shows(whole[:20]))
	step("next: the jobs after its last",
		chromedp.Click(chromedp.CSS(`#next`)),
		chromedp.Poll[chromedp.Void](`location.hash.includes("after=")`),
		shows(whole[20:40]))
	step("next again: the last five, and no next",
		chromedp.Click(chromedp.CSS(`#next`)),
		shows(whole[40:]),
		chromedp.WaitVisible(chromedp.CSS(`#next[disabled]`)))
	step("prev: the jobs before its first",
		chromedp.Click(chromedp.CSS(`#prev`)),
		chromedp.Poll[chromedp.Void](`location.hash.includes("before=")`),
		shows(whole[20:40]))
	step("prev again: the first page",
		chromedp.Click(chromedp.CSS(`#prev`)),
		shows(whole[:20]))
	require.Empty(t, exceptions(), "JavaScript exceptions in the page")
}

// TestDashboardListsEveryStateNewestFirst: the list of every state is in
// creation order across types, newest first by default, and says so; its
// other order is oldest first. Ids would order it otherwise: each type's
// come in a block of their own.
func TestDashboardListsEveryStateNewestFirst(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED: the browser test (headless Chromium) does not run with -short")
	}
	t.Parallel()
	e := newEnv(t, httpapi.Config{})
	var ids []int64 // in creation order
	for _, typ := range []string{"x", "y", "x", "y"} {
		ids = append(ids, e.create(map[string]any{"type": typ}).ID)
	}
	require.False(t, slices.IsSorted(ids), "ids (a block per type) are not in creation order: %v", ids)
	created := make([]string, len(ids))
	for i, id := range ids {
		created[i] = fmt.Sprint(id)
	}
	newest := slices.Clone(created)
	slices.Reverse(newest)
	browser, exceptions := newBrowser(t)
	step, shot := stepper(t, browser, artifacts(t))
	rows := func(ids []string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](fmt.Sprintf(
			`Array.from(document.querySelectorAll("#list tbody tr")).map((tr) => tr.dataset.id).join(",") === %q`,
			strings.Join(ids, ",")))
	}
	step("every state: newest first, and labelled so",
		chromedp.Navigate(e.url+"/#/jobs/all/all"),
		rows(newest),
		chromedp.Poll[chromedp.Void](`document.querySelector("#order").selectedOptions[0].textContent === "newest first"`))
	shot("newest-first.png")
	step("the other order: oldest first",
		chromedp.Navigate(e.url+"/#/jobs/all/all?order=asc"),
		rows(created),
		chromedp.Poll[chromedp.Void](`document.querySelector("#order").selectedOptions[0].textContent === "oldest first"`))
	require.Empty(t, exceptions(), "JavaScript exceptions in the page")
}

// stepper returns a test's two browser verbs: step runs actions, each
// bounded by waitTimeout, failing the test with what they were for; shot
// saves a screenshot of the page in dir.
func stepper(t *testing.T, browser context.Context, dir string) (step func(string, ...chromedp.Action[chromedp.Void]), shot func(string)) {
	step = func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		ctx, cancel := context.WithTimeout(browser, waitTimeout)
		defer cancel()
		require.NoError(t, chromedp.Do(ctx, actions...), what)
	}
	shot = func(name string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(browser, waitTimeout)
		defer cancel()
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), png, 0o644))
	}
	return step, shot
}

// newBrowser starts headless Chromium for one test and returns its context
// and a function that lists the JavaScript exceptions its pages threw.
func newBrowser(t *testing.T) (context.Context, func() []string) {
	t.Helper()
	chromium := findChromium()
	if chromium == "" {
		t.Fatalf("chromium is not installed (looked for chromium and chromium-browser in PATH, and /usr/bin/chromium): "+
			"install it with `%s` (Debian), or run with -short to skip this test", chromiumInstall)
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromium),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.WindowSize(1400, 1000),
	)
	t.Cleanup(cancelAlloc)
	browser, cancelBrowser := chromedp.NewContext(alloc)
	t.Cleanup(cancelBrowser)
	// The first Run starts the browser, for as long as its context lives:
	// no timeout on it, only on the steps of the tests.
	require.NoError(t, chromedp.Do(browser), "start chromium at %s", chromium)
	var mu sync.Mutex
	var exceptions []string
	require.NoError(t, chromedp.Listen(browser, func(ev any) {
		if ex, ok := ev.(*runtime.EventExceptionThrown); ok {
			mu.Lock()
			d := ex.ExceptionDetails
			msg := fmt.Sprintf("%s at %s:%d:%d", d.Text, d.URL, d.LineNumber+1, d.ColumnNumber+1)
			if d.Exception != nil {
				msg += ": " + d.Exception.Description
			}
			exceptions = append(exceptions, msg)
			mu.Unlock()
		}
	}))
	return browser, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), exceptions...)
	}
}

// seed fills the queue so that the dashboard has something to show: jobs
// of three types in every state, one running at 60% with a log.
func seed(t *testing.T, e *env) {
	t.Helper()
	for i := range 6 {
		e.create(map[string]any{"type": "email", "data": map[string]any{"to": fmt.Sprintf("user%d@example.com", i)}})
	}
	e.create(map[string]any{"type": "report", "data": map[string]int{"month": 11}, "options": map[string]any{"delay": 3600000}})
	e.ok(http.StatusCreated, "POST", "/job", `[{"type":"thumbnail","data":{"image":"cat.png"}},{"type":"thumbnail","data":{"image":"dog.png"},"priority":"critical"}]`, nil)
	var running core.Job
	e.ok(http.StatusOK, "POST", "/pop?type=thumbnail", nil, &running)
	done, total := int64(3), int64(5)
	require.NoError(t, e.core.Client.Progress(t.Context(),
		core.LeaseOp{ID: running.ID, Lease: running.Lease, Complete: &done, Total: &total}))
	e.ok(http.StatusOK, "POST", fmt.Sprintf("/job/%d/log", running.ID), `{"line":"resizing to 256x256"}`, nil)
	var leased core.Job
	e.ok(http.StatusOK, "POST", "/pop?type=email", nil, &leased)
	e.ok(http.StatusOK, "POST", fmt.Sprintf("/job/%d/complete", leased.ID), map[string]any{"lease": leased.Lease, "result": map[string]string{"message_id": "m-1"}}, nil)
	failJob(t, e, "email", "smtp: 550 mailbox unavailable")
}

// failJob creates a job of one attempt, leases it and fails it. It is
// critical, so that it is leased before the other jobs of its type.
func failJob(t *testing.T, e *env, typ, reason string) core.Job {
	t.Helper()
	job := e.create(map[string]any{"type": typ, "data": map[string]string{"why": "fails"}, "options": map[string]any{"priority": "critical"}})
	var leased core.Job
	e.ok(http.StatusOK, "POST", "/pop?type="+typ, nil, &leased)
	for leased.ID != job.ID {
		// An older job of the type came first: finish it and lease again.
		e.ok(http.StatusOK, "POST", fmt.Sprintf("/job/%d/complete", leased.ID), map[string]any{"lease": leased.Lease}, nil)
		e.ok(http.StatusOK, "POST", "/pop?type="+typ, nil, &leased)
	}
	e.ok(http.StatusOK, "POST", fmt.Sprintf("/job/%d/fail", job.ID), map[string]any{"lease": leased.Lease, "error": reason}, nil)
	return job
}

// TestSignInAndOutInBrowser signs in to a dashboard with token auth, is
// sent back to the login form when the session runs out, and signs out
// with the top bar's button.
func TestSignInAndOutInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED: the browser test (headless Chromium) does not run with -short")
	}
	t.Parallel()
	clk := newFakeClock()
	e := newClockedEnv(t, httpapi.Config{Auth: httpapi.Auth{Token: "s3cret"}, SessionTTL: time.Hour}, clk)
	e.header.Set("Authorization", "Bearer s3cret")
	browser, exceptions := newBrowser(t)
	step := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		ctx, cancel := context.WithTimeout(browser, waitTimeout)
		defer cancel()
		require.NoError(t, chromedp.Do(ctx, actions...), what)
	}
	token := chromedp.CSS(`input[name="token"]`)
	signIn := []chromedp.Action[chromedp.Void]{
		chromedp.WaitVisible(token),
		chromedp.SendKeys(token, "s3cret"),
		chromedp.Submit(token),
		chromedp.WaitVisible(chromedp.CSS(`#list`)),
		chromedp.WaitReady(chromedp.CSS(`body[data-live="1"]`)),
	}

	step("open the dashboard, get the login form, sign in", append([]chromedp.Action[chromedp.Void]{chromedp.Navigate(e.url + "/")}, signIn...)...)
	ctx, cancel := context.WithTimeout(browser, waitTimeout)
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	cancel()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(artifacts(t), "7-signed-in.png"), png, 0o644))
	clk.advance(time.Hour)
	e.create(map[string]any{"type": "email"}) // an event: the page reads again
	step("the session ran out: back at the login form", append([]chromedp.Action[chromedp.Void]{}, signIn...)...)
	step("sign out, and stay out",
		chromedp.Click(chromedp.CSS(`form.signout button`)),
		chromedp.WaitVisible(token),
		chromedp.Navigate(e.url+"/"),
		chromedp.WaitVisible(token),
	)
	require.Empty(t, exceptions(), "JavaScript exceptions in the page")
}
