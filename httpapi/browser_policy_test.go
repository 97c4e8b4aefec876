package httpapi_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/httpapi"
)

// TestDashboardShowsWhyAJobWaitsAndATypesLimits: in headless Chromium, the
// job page of a job its type's concurrency holds back says so in its Why
// panel, and the types table tags the type with its limit and what it
// holds back.
func TestDashboardShowsWhyAJobWaitsAndATypesLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED: the browser test (headless Chromium) does not run with -short")
	}
	t.Parallel()
	e := newEnv(t, httpapi.Config{})
	dir := artifacts(t)
	e.ok(http.StatusOK, "PUT", "/types/capped/policy", `{"concurrency":1}`, nil)
	e.create(map[string]any{"type": "capped"})
	held := e.create(map[string]any{"type": "capped"})
	e.ok(http.StatusOK, "POST", "/pop?type=capped", nil, nil)
	browser, exceptions := newBrowser(t)
	step, shot := stepper(t, browser, dir)

	step("the held job's page says why it waits",
		chromedp.Navigate(fmt.Sprintf("%s/#/job/%d", e.url, held.ID)),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#job[data-id="%d"]`, held.ID))),
		chromedp.WaitVisible(chromedp.CSS(`#job-why span[data-reason="concurrency"]`)),
	)
	shot("policy-1-why.png")
	step("the types table shows the type's limit and the job it holds back",
		chromedp.Navigate(e.url+"/#/"),
		chromedp.WaitVisible(chromedp.CSS(`#types tr[data-type="capped"] .tag.limit[data-held="1"]`)),
	)
	shot("policy-2-limits.png")
	require.Empty(t, exceptions(), "JavaScript exceptions in the page")
}
