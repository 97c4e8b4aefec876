package httpapi_test

import (
	"fmt"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/httpapi"
)

// TestJobPageInBrowser: a job's page says which retention rule applies
// (its own, its type's default from the node's config, or none), shows
// each log line with its time, and runs a delayed job now.
func TestJobPageInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED: the browser test (headless Chromium) does not run with -short")
	}
	t.Parallel()
	e := newEnv(t, httpapi.Config{}, service.Config{Retention: map[string]core.TypeRetention{
		"report": {Complete: core.Retention{Age: 24 * time.Hour}},
	}})
	browser, exceptions := newBrowser(t)
	step, shot := stepper(t, browser, artifacts(t))
	text := func(sel string) string {
		t.Helper()
		return evalIn[string](t, browser, fmt.Sprintf(`document.querySelector(%q).textContent`, sel))
	}

	later := e.create(map[string]any{"type": "report", "delay": 3_600_000, "remove_on_fail": map[string]any{"count": 10}})
	e.ok(http.StatusOK, "POST", fmt.Sprintf("/job/%d/log", later.ID), `{"line":"queued for the night"}`, nil)
	step("open a delayed job",
		chromedp.Navigate(fmt.Sprintf("%s/#/job/%d", e.url, later.ID)),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#job[data-id="%d"][data-state="delayed"]`, later.ID))),
		chromedp.WaitVisible(chromedp.CSS(`#job-log .logline time`)),
	)
	require.Equal(t, "after 1d (report's default)", text("#job-roc"), "no rule of its own: the type's default")
	require.Equal(t, "beyond the newest 10 (its own)", text("#job-rof"))
	require.Regexp(t, regexp.MustCompile(`^\d\d:\d\d:\d\d\.\d\d\d\s+queued for the night$`), text("#job-log .logline"), "the line's time, then the line")
	shot("job-1-delayed.png")

	step("run it now",
		chromedp.Click(chromedp.CSS(`#run-now`)),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#job[data-id="%d"][data-state="inactive"]`, later.ID))),
	)
	got, err := e.core.Client.Get(t.Context(), later.ID)
	require.NoError(t, err)
	require.Equal(t, core.StateInactive, got.State)

	plain := e.create(map[string]any{"type": "email"})
	step("a job of a type without a default",
		chromedp.Navigate(fmt.Sprintf("%s/#/job/%d", e.url, plain.ID)),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#job[data-id="%d"]`, plain.ID))),
	)
	require.Equal(t, "kept (no rule)", text("#job-roc"))
	require.Empty(t, evalIn[int](t, browser, `document.querySelectorAll("#run-now").length`), "only a delayed job runs now")
	require.Empty(t, exceptions(), "JavaScript exceptions in the page")
}
