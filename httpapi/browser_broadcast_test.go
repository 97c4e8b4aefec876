package httpapi_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/httpapi"
)

// TestDashboardShowsABroadcastJobAsSuch: a broadcast job's page carries a
// broadcast tag beside its state; an ordinary job's does not.
func TestDashboardShowsABroadcastJobAsSuch(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED: the browser test (headless Chromium) does not run with -short")
	}
	t.Parallel()
	e := newEnv(t, httpapi.Config{})
	radio := e.create(map[string]any{"type": "radio", "broadcast": true, "data": map[string]string{"say": "hi"}})
	plain := e.create(map[string]any{"type": "radio"})
	browser, exceptions := newBrowser(t)
	step, shot := stepper(t, browser, artifacts(t))

	step("a broadcast job's page says broadcast",
		chromedp.Navigate(fmt.Sprintf("%s/#/job/%d", e.url, radio.ID)),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#job[data-id="%d"]`, radio.ID))),
		chromedp.WaitVisible(chromedp.CSS(`#job-broadcast`)),
	)
	shot("broadcast-job.png")
	ctx, cancel := context.WithTimeout(browser, waitTimeout)
	defer cancel()
	tag, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#job-broadcast").textContent`))
	require.NoError(t, err)
	require.Equal(t, "broadcast", tag)

	step("an ordinary job's page does not",
		chromedp.Navigate(fmt.Sprintf("%s/#/job/%d", e.url, plain.ID)),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#job[data-id="%d"]`, plain.ID))),
	)
	tags, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#job-broadcast").length`))
	require.NoError(t, err)
	require.Zero(t, tags)
	require.Empty(t, exceptions(), "JavaScript exceptions in the page")
}
