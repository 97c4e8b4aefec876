package httpapi_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/httpapi"
)

// refused is the group of the failures that differ only by address.
const refused = "dial tcp <addr>: connection refused"

// TestTriageInBrowser drives failed-job triage in headless Chromium: the
// failed list shows each job's last error and filters by it; the Errors
// view groups the failures by normalised error, and its Retry runs one
// group again (checked against core) while the other stays failed.
func TestTriageInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED: the browser test (headless Chromium) does not run with -short")
	}
	t.Parallel()
	e := newEnv(t, httpapi.Config{})
	dir := artifacts(t)
	browser, exceptions := newBrowser(t)
	step, shot := stepper(t, browser, dir)

	var down, quota []core.Job
	for i := range 3 {
		down = append(down, failJob(t, e, "sync", fmt.Sprintf("dial tcp 10.0.0.%d:443: connection refused", i+1)))
	}
	for _, who := range []string{"acme", "globex"} {
		quota = append(quota, failJob(t, e, "sync", fmt.Sprintf("quota exceeded for %q", who)))
	}

	step("the failed list shows each job's error",
		chromedp.Navigate(e.url+"/#/jobs/failed/sync"),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#list tr[data-id="%d"] td.error[title="dial tcp 10.0.0.1:443: connection refused"]`, down[0].ID))),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#list tr[data-id="%d"] td.error[title='quota exceeded for "globex"']`, quota[1].ID))),
	)
	shown := evalIn[string](t, browser, fmt.Sprintf(`document.querySelector('#list tr[data-id="%d"] td.error').textContent`, down[2].ID))
	require.Equal(t, "dial tcp 10.0.0.3:443: connection refused", shown, "the row's error as the user sees it")
	shot("triage-1-failed-list-errors.png")

	step("filter the failed list by error text",
		chromedp.SendKeys(chromedp.CSS(`#error-filter input`), "quota\r"),
		chromedp.WaitVisible(chromedp.CSS(`#list[data-filtered="1"]`)),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#list tr[data-id="%d"]`, quota[0].ID))),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#list tr[data-id="%d"]`, quota[1].ID))),
	)
	rows := evalIn[int](t, browser, `document.querySelectorAll("#list tbody tr[data-id]").length`)
	require.Equal(t, 2, rows, "only the matching jobs are listed")
	shot("triage-2-filtered.png")

	step("the Errors view groups the failures",
		chromedp.Click(chromedp.CSS(`#to-errors`)),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#error-groups tr[data-group=%q][data-count="3"]`, refused))),
		chromedp.WaitVisible(chromedp.CSS(`#error-groups tr[data-group="quota exceeded for <str>"][data-count="2"]`)),
	)
	first := evalIn[string](t, browser, `document.querySelector("#error-groups tbody tr").dataset.group`)
	require.Equal(t, refused, first, "the largest group comes first")
	shot("triage-3-errors-view.png")

	retry := chromedp.CSS(fmt.Sprintf(`#error-groups tr[data-group=%q] button[data-group-action="retry"]`, refused))
	step("retry the group (two clicks): it leaves the view",
		chromedp.Click(retry),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#error-groups tr[data-group=%q] button[data-group-action="retry"].armed`, refused))),
		chromedp.Click(retry),
		chromedp.WaitNotPresent(chromedp.CSS(fmt.Sprintf(`#error-groups tr[data-group=%q]`, refused))),
		chromedp.WaitVisible(chromedp.CSS(`#error-groups tr[data-group="quota exceeded for <str>"][data-count="2"]`)),
	)
	shot("triage-4-group-retried.png")
	for _, j := range down {
		got, err := e.core.Client.Get(t.Context(), j.ID)
		require.NoError(t, err)
		require.Equal(t, core.StateInactive, got.State, "job %d of the retried group", j.ID)
	}
	for _, j := range quota {
		got, err := e.core.Client.Get(t.Context(), j.ID)
		require.NoError(t, err)
		require.Equal(t, core.StateFailed, got.State, "job %d of the other group", j.ID)
	}
	require.Empty(t, exceptions(), "JavaScript exceptions in the page")
}

// TestSearchFindsAJobPastTheFirstThousandsInBrowser: the one matching job
// comes after 2500 that do not, so core's search (1000 jobs looked at per
// call) answers two empty pages with a cursor before it; the page follows
// the cursor and shows the job. The search box is reached with "/".
func TestSearchFindsAJobPastTheFirstThousandsInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED: the browser test (headless Chromium) does not run with -short")
	}
	t.Parallel()
	e := newEnv(t, httpapi.Config{})
	browser, exceptions := newBrowser(t)
	step, shot := stepper(t, browser, artifacts(t))

	specs := make([]core.Spec, 500)
	for i := range specs {
		specs[i] = core.Spec{Type: "bulk", Data: []byte(`{"n":1}`)}
	}
	for range 5 {
		_, err := e.core.Client.CreateBulkIDs(t.Context(), specs)
		require.NoError(t, err)
	}
	needle := e.create(map[string]any{"type": "bulk", "data": map[string]string{"order": "zebra-42"}})

	step("press /",
		chromedp.Navigate(e.url+"/"),
		chromedp.WaitVisible(chromedp.CSS(`#list`)),
		slashKey(),
	)
	require.True(t, evalIn[bool](t, browser, `document.activeElement === document.querySelector("#search input")`), "/ focuses the search box")
	require.Empty(t, evalIn[string](t, browser, `document.querySelector("#search input").value`), "the / itself is not typed into it")
	step("type the text and Enter",
		chromedp.KeyEvent("zebra-42\r"),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#results tr[data-id="%d"]`, needle.ID))),
	)
	shot("triage-5-search-far.png")
	require.Empty(t, exceptions(), "JavaScript exceptions in the page")
}

// TestViewerSeesNoChangeButtonsInBrowser: a viewer signs in and sees the
// failed list, a failed job, the Errors view and the schedules, with no
// button that changes anything (the server would refuse them); an admin
// on the same server sees them.
func TestViewerSeesNoChangeButtonsInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED: the browser test (headless Chromium) does not run with -short")
	}
	t.Parallel()
	e := newEnv(t, httpapi.Config{Auth: lockedAuth})
	e.header.Set("Authorization", basic("ada", "admin-pw"))
	failed := failJob(t, e, "sync", "dial tcp 10.0.0.1:443: connection refused")
	dir := artifacts(t)

	// buttons counts the buttons (and the schedule form) that change
	// something on each page, once the page has drawn what it waits for.
	buttons := func(who, user, password string) map[string]int {
		browser, exceptions := newBrowser(t)
		step, shot := stepper(t, browser, dir)
		step("sign in as "+who,
			chromedp.Navigate(e.url+"/"),
			chromedp.WaitVisible(chromedp.CSS(`input[name="user"]`)),
			chromedp.SendKeys(chromedp.CSS(`input[name="user"]`), user),
			chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), password),
			chromedp.Submit(chromedp.CSS(`input[name="password"]`)),
			chromedp.WaitVisible(chromedp.CSS(`#list`)),
		)
		n := map[string]int{}
		look := func(page, hash, ready, changes string) {
			t.Helper()
			step(who+" opens "+page,
				chromedp.Navigate(e.url+"/"+hash),
				chromedp.WaitVisible(chromedp.CSS(ready)))
			n[page] = evalIn[int](t, browser, fmt.Sprintf(`document.querySelectorAll(%q).length`, changes))
		}
		look("failed list", "#/jobs/failed/sync", fmt.Sprintf(`#list[data-state="failed"][data-type="sync"] tr[data-id="%d"]`, failed.ID), `#bulk button, #types button`)
		look("job", fmt.Sprintf("#/job/%d", failed.ID), `#job-error`, `#job .actions button, #job .actions select`)
		look("errors", "#/errors/sync", `#error-groups tr[data-count="1"]`, `#error-groups button`)
		look("schedules", "#/schedules", `#schedules`, `#schedule-form, #schedules button`)
		shot("triage-6-" + who + ".png")
		require.Empty(t, exceptions(), "JavaScript exceptions in the page")
		return n
	}
	require.Equal(t, map[string]int{"failed list": 0, "job": 0, "errors": 0, "schedules": 0},
		buttons("a viewer", "vic", "viewer-pw"), "a viewer sees no change buttons")
	admin := buttons("an admin", "ada", "admin-pw")
	for page, k := range admin {
		if page != "schedules" { // no schedule yet: only the form
			require.Greater(t, k, 1, "an admin sees the buttons of the %s", page)
		}
	}
	require.Equal(t, 1, admin["schedules"], "an admin sees the schedule form")
}

// evalIn evaluates a JavaScript expression in the browser's page.
func evalIn[T any](t *testing.T, browser context.Context, expr string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(browser, waitTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	require.NoError(t, err, expr)
	return v
}

// slashKey presses "/" as a keyboard does: one keyDown that carries its
// text, which the page's preventDefault cancels (chromedp.KeyEvent sends
// the text as a separate char event, which nothing cancels).
func slashKey() chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		for _, typ := range []input.DispatchKeyEventType{input.DispatchKeyEventTypeKeyDown, input.DispatchKeyEventTypeKeyUp} {
			k := input.DispatchKeyEventParams{Type: typ, Key: "/", Code: "Slash", WindowsVirtualKeyCode: 191, NativeVirtualKeyCode: 191}
			if typ == input.DispatchKeyEventTypeKeyDown {
				k.Text, k.UnmodifiedText = "/", "/"
			}
			if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, k); err != nil {
				return err
			}
		}
		return nil
	})
}
