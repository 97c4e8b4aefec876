package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/httpapi"
)

// TestBasePath: with BasePath every route moves under it, the bare base
// redirects to base/, and other paths answer a JSON 404 naming the base.
func TestBasePath(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpapi.Config{BasePath: "/admin/queues/"})

	_, err := e.core.Client.Create(t.Context(), "email", nil, nil)
	require.NoError(t, err)
	e.ok(http.StatusCreated, "POST", "/admin/queues/job", map[string]any{"type": "email"}, nil)
	var stats map[string]any
	e.ok(http.StatusOK, "GET", "/admin/queues/stats", nil, &stats)
	require.EqualValues(t, 2, stats["inactive"])
	page := e.do("GET", "/admin/queues/", nil)
	require.Equal(t, http.StatusOK, page.status)
	require.Contains(t, page.String(), `<script src="assets/app.js"`, "relative: it resolves under the base")
	require.Equal(t, http.StatusOK, e.do("GET", "/admin/queues/assets/app.js", nil).status)

	r := e.do("GET", "/admin/queues", nil)
	require.Equal(t, http.StatusMovedPermanently, r.status)
	require.Equal(t, "/admin/queues/", r.header.Get("Location"))

	msg := e.fails(http.StatusNotFound, "no_route", "GET", "/stats", nil)
	require.Contains(t, msg, "this server serves under /admin/queues/")
}

// TestBasePathLogin: the login redirect, the form's target and the session
// cookie's path all carry the base path.
func TestBasePathLogin(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpapi.Config{BasePath: "/ops", Auth: httpapi.Auth{Token: "s3cret"}})
	r := e.do("GET", "/ops/", nil, "Accept", "text/html")
	require.Equal(t, http.StatusSeeOther, r.status)
	require.Equal(t, "/ops/login", r.header.Get("Location"))
	form := e.do("GET", "/ops/login", nil)
	require.Contains(t, form.String(), `action="login"`)
	r = e.do("POST", "/ops/login", url.Values{"token": {"s3cret"}}.Encode(), "Content-Type", formType, "Sec-Fetch-Site", "same-origin")
	require.Equal(t, http.StatusSeeOther, r.status)
	require.Equal(t, "/ops/", r.header.Get("Location"))
	require.Contains(t, r.header.Get("Set-Cookie"), "Path=/ops/")
}

// TestDashboardUnderABasePath opens the dashboard at /admin/queues/ in
// headless Chromium: its script and styles load, it goes live, a job
// created through the API appears, and the last hour's chart is drawn.
func TestDashboardUnderABasePath(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED: the browser test (headless Chromium) does not run with -short")
	}
	t.Parallel()
	e := newEnv(t, httpapi.Config{BasePath: "/admin/queues"})
	browser, exceptions := newBrowser(t)
	ctx, cancel := context.WithTimeout(browser, waitTimeout)
	defer cancel()
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(e.url+"/admin/queues/"),
		chromedp.WaitVisible(chromedp.CSS(`#list`)),
		chromedp.WaitReady(chromedp.CSS(`body[data-live="1"]`)),
	), "the page loads and goes live under the base path")
	job, err := e.core.Client.Create(t.Context(), "email", nil, nil)
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#list tr[data-id="%d"]`, job.ID)))), "a new job appears")
	// The chart reads GET /history under the base path too: with this
	// minute's counts in Redis, the next event makes the page read again.
	e.core.Service.FlushHistory(t.Context())
	_, err = e.core.Client.Create(t.Context(), "email", nil, nil)
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.CSS(`#history-chart:not([data-created="0"]) #chart-jobs .uplot canvas`))), "the last hour's chart, by uPlot from under the base path")
	color, err := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector(".top")).backgroundColor`))
	require.NoError(t, err)
	require.Equal(t, "rgb(29, 35, 48)", color, "the stylesheet applied (.top is #1d2330)")
	require.Empty(t, exceptions(), "JavaScript exceptions in the page")
}
