package httpapi_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/httpapi"
)

// TestDashboardOperatesTheQueueInBrowser drives the operator's controls of
// issue 13 in headless Chromium, each checked against core afterwards, with
// a screenshot of each: a failed job's error history; Cancel on a waiting
// job; the failed list's Retry all; the search box; the Schedules page
// (add one, run it now, pause it, remove it); the Workers page.
func TestDashboardOperatesTheQueueInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED: the browser test (headless Chromium) does not run with -short")
	}
	t.Parallel()
	e := newEnv(t, httpapi.Config{})
	dir := artifacts(t)
	browser, exceptions := newBrowser(t)
	step, shot := stepper(t, browser, dir)
	get := func(id int64) *core.Job {
		t.Helper()
		j, err := e.core.Client.Get(t.Context(), id)
		require.NoError(t, err)
		return j
	}

	// A job that failed with a stack: its page shows the error history.
	failed := e.create(map[string]any{"type": "report", "data": map[string]string{"invoice": "INV-7731"}})
	var leased core.Job
	e.ok(http.StatusOK, "POST", "/pop?type=report", nil, &leased)
	e.ok(http.StatusOK, "POST", fmt.Sprintf("/job/%d/fail", failed.ID),
		map[string]any{"lease": leased.Lease, "error": "upstream 502", "stack": "goroutine 1 [running]:\nmain.report()"}, nil)
	step("a failed job's page shows its failed attempts",
		chromedp.Navigate(fmt.Sprintf("%s/#/job/%d", e.url, failed.ID)),
		chromedp.WaitVisible(chromedp.CSS(`#job-errors tbody tr`)),
	)
	shot("op-1-error-history.png")

	waiting := e.create(map[string]any{"type": "email", "data": map[string]string{"to": "ada@example.com"}})
	step("cancel a waiting job from its page (two clicks)",
		chromedp.Navigate(fmt.Sprintf("%s/#/job/%d", e.url, waiting.ID)),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#job[data-id="%d"][data-state="inactive"]`, waiting.ID))),
		chromedp.Click(chromedp.CSS(`#cancel`)),
		chromedp.WaitVisible(chromedp.CSS(`#cancel.armed`)),
		chromedp.Click(chromedp.CSS(`#cancel`)),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#job[data-id="%d"][data-state="cancelled"]`, waiting.ID))),
	)
	shot("op-2-cancelled.png")
	require.Equal(t, core.StateCancelled, get(waiting.ID).State)

	second := failJob(t, e, "report", "upstream 503")
	step("retry every failed report from the failed list (two clicks)",
		chromedp.Navigate(e.url+"/#/jobs/failed/report"),
		chromedp.WaitVisible(chromedp.CSS(`#bulk button[data-bulk="retry"]`)),
		chromedp.Click(chromedp.CSS(`#bulk button[data-bulk="retry"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#bulk button[data-bulk="retry"].armed`)),
	)
	shot("op-3-bulk-armed.png")
	step("the second click retries them all",
		chromedp.Click(chromedp.CSS(`#bulk button[data-bulk="retry"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#counts a[data-state="failed"][data-n="0"]`)),
	)
	require.Equal(t, core.StateInactive, get(failed.ID).State)
	require.Equal(t, core.StateInactive, get(second.ID).State)

	step("search by text in a job's data",
		// Enter, as a person submits it: form.submit() would skip the page's
		// submit handler.
		chromedp.SendKeys(chromedp.CSS(`#search input`), "inv-7731\r"),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#results tr[data-id="%d"]`, failed.ID))),
	)
	shot("op-4-search.png")

	step("add a schedule from the Schedules page",
		chromedp.Click(chromedp.CSS(`#nav-schedules`)),
		chromedp.WaitVisible(chromedp.CSS(`#schedule-form`)),
		chromedp.SendKeys(chromedp.CSS(`#schedule-form input[name="name"]`), "nightly"),
		chromedp.SendKeys(chromedp.CSS(`#schedule-form input[name="cron"]`), "30 2 * * *"),
		chromedp.SendKeys(chromedp.CSS(`#schedule-form input[name="tz"]`), "Europe/Paris"),
		chromedp.SendKeys(chromedp.CSS(`#schedule-form input[name="type"]`), "report"),
		chromedp.Click(chromedp.CSS(`#schedule-save`)),
		chromedp.WaitVisible(chromedp.CSS(`#schedules tr[data-name="nightly"][data-paused="0"][data-last="0"]`)),
		chromedp.Click(chromedp.CSS(`#schedules button[data-run="nightly"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#schedules tr[data-name="nightly"]:not([data-last="0"])`)),
		chromedp.Click(chromedp.CSS(`#schedules button[data-toggle="nightly"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#schedules tr[data-name="nightly"][data-paused="1"]`)),
	)
	shot("op-5-schedules.png")
	list, err := e.core.Client.Schedules(t.Context())
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, "30 2 * * *", list[0].Cron)
	require.True(t, list[0].Paused)
	require.NotZero(t, list[0].LastAt, "Run now ran it")
	ran, err := e.core.Client.Range(t.Context(), core.RangeRequest{Type: "report", State: core.StateInactive, From: 0, To: 99})
	require.NoError(t, err)
	require.True(t, slices.ContainsFunc(ran, func(j core.Job) bool { return j.Schedule == "nightly" }), "Run now made the schedule's job")
	step("remove it (two clicks)",
		chromedp.Click(chromedp.CSS(`#schedules button[data-remove="nightly"]`)),
		chromedp.Click(chromedp.CSS(`#schedules button[data-remove="nightly"]`)),
		chromedp.WaitNotPresent(chromedp.CSS(`#schedules tr[data-name="nightly"]`)),
	)
	list, err = e.core.Client.Schedules(t.Context())
	require.NoError(t, err)
	require.Empty(t, list)

	require.NoError(t, e.core.Client.Heartbeat(t.Context(), core.Heartbeat{Worker: "mailer-1", Types: []string{"email"}, Concurrency: 4, Running: 2, Host: "box"}))
	step("the Workers page lists the live workers",
		chromedp.Click(chromedp.CSS(`#nav-workers`)),
		chromedp.WaitVisible(chromedp.CSS(`#workers tr[data-worker="mailer-1"]`)),
	)
	shot("op-6-workers.png")

	require.Empty(t, exceptions(), "JavaScript exceptions in the page")
}
