package httpapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/httpapi"
)

// TestTypePageEditsItsPolicyInBrowser: in headless Chromium, an admin
// opens a type's page and sees its policy in the form; a value core
// refuses (concurrency -1) shows core's error under that field and stores
// nothing, a duration the page cannot read (rate per "soon") is named
// under its field before anything is sent; a good edit (limits, aging,
// defaults, durations written as 1m or 500ms) is stored in ms and keeps
// what the form does not show (the retention default). A viewer sees the
// policy and no control that would change it.
func TestTypePageEditsItsPolicyInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED: the browser test (headless Chromium) does not run with -short")
	}
	t.Parallel()
	e := newEnv(t, httpapi.Config{Auth: lockedAuth})
	e.header.Set("Authorization", basic("ada", "admin-pw"))
	e.ok(http.StatusOK, "PUT", "/types/sms/policy", `{"concurrency":3,"defaults":{"remove_on_complete":{"age":60000}}}`, nil)
	e.create(map[string]any{"type": "sms"})
	dir := artifacts(t)
	policy := func() map[string]any {
		var out map[string]any
		e.ok(http.StatusOK, "GET", "/types/sms/policy", nil, &out)
		return out
	}
	signIn := func(user, password string) (context.Context, func() []string, func(string, ...chromedp.Action[chromedp.Void]), func(string)) {
		browser, exceptions := newBrowser(t)
		step, shot := stepper(t, browser, dir)
		step("sign in as "+user,
			chromedp.Navigate(e.url+"/"),
			chromedp.WaitVisible(chromedp.CSS(`input[name="user"]`)),
			chromedp.SendKeys(chromedp.CSS(`input[name="user"]`), user),
			chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), password),
			chromedp.Submit(chromedp.CSS(`input[name="password"]`)),
			chromedp.WaitVisible(chromedp.CSS(`#list`)),
		)
		return browser, exceptions, step, shot
	}
	field := func(name string) string { return `#policy-form [name="` + name + `"]` }

	browser, exceptions, step, shot := signIn("ada", "admin-pw")
	step("the type's page shows its policy in the form",
		chromedp.Navigate(e.url+"/#/jobs/all/sms"),
		chromedp.WaitVisible(chromedp.CSS(field("concurrency")+`[value="3"]`)),
	)
	step("core refuses a concurrency of -1: its error shows under the field",
		chromedp.SetValue(chromedp.CSS(field("concurrency")), "-1"),
		chromedp.Click(chromedp.CSS(`#policy-save`)),
		chromedp.WaitVisible(chromedp.CSS(`#policy-form .field-error[data-field="concurrency"][data-by="core"]`)),
	)
	shot("typepolicy-1-refused.png")
	msg := evalIn[string](t, browser, `document.querySelector('#policy-form .field-error[data-field="concurrency"]').textContent`)
	require.Contains(t, msg, "concurrency: -1 is outside")
	require.Equal(t, float64(3), policy()["concurrency"], "nothing stored")

	step("a duration the page cannot read is named under its field",
		chromedp.SetValue(chromedp.CSS(field("concurrency")), "2"),
		chromedp.SetValue(chromedp.CSS(field("rate.limit")), "10"),
		chromedp.SetValue(chromedp.CSS(field("rate.per")), "soon"),
		chromedp.Click(chromedp.CSS(`#policy-save`)),
		chromedp.WaitVisible(chromedp.CSS(`#policy-form .field-error[data-field="rate.per"][data-by="page"]`)),
	)
	require.Equal(t, 0, evalIn[int](t, browser, `document.querySelectorAll('#policy-form .field-error[data-field="concurrency"]').length`), "the old error is gone")
	require.Equal(t, float64(3), policy()["concurrency"], "nothing sent")

	step("a good edit is saved and drawn again from what core stored",
		chromedp.SetValue(chromedp.CSS(field("rate.per")), "1m"),
		chromedp.SetValue(chromedp.CSS(field("aging.per")), "1s"),
		chromedp.SetValue(chromedp.CSS(field("defaults.max_attempts")), "3"),
		chromedp.SetValue(chromedp.CSS(field("defaults.ttl")), "2m"),
		chromedp.SetValue(chromedp.CSS(field("defaults.backoff.type")), "exponential"),
		chromedp.SetValue(chromedp.CSS(field("defaults.backoff.delay")), "500ms"),
		chromedp.Click(chromedp.CSS(`#policy-save`)),
		chromedp.WaitVisible(chromedp.CSS(field("concurrency")+`[value="2"]`)),
		chromedp.WaitVisible(chromedp.CSS(field("rate.per")+`[value="1m"]`)),
		chromedp.WaitVisible(chromedp.CSS(field("defaults.backoff.delay")+`[value="500ms"]`)),
	)
	shot("typepolicy-2-saved.png")
	require.Equal(t, map[string]any{
		"type": "sms", "concurrency": float64(2),
		"rate":  map[string]any{"limit": float64(10), "per": float64(60000)},
		"aging": map[string]any{"per": float64(1000)},
		"defaults": map[string]any{"max_attempts": float64(3), "ttl": float64(120000),
			// first retry after 500ms: the wire's Kue delay is twice that
			"backoff":            map[string]any{"type": "exponential", "delay": float64(1000)},
			"remove_on_complete": map[string]any{"age": float64(60000)}},
	}, policy())
	require.Equal(t, 0, evalIn[int](t, browser, `document.querySelectorAll('#policy-form .field-error').length`))
	require.Empty(t, exceptions(), "JavaScript exceptions in the page")

	browser, exceptions, step, shot = signIn("vic", "viewer-pw")
	step("a viewer sees the policy",
		chromedp.Navigate(e.url+"/#/jobs/all/sms"),
		chromedp.WaitVisible(chromedp.CSS(`#policy #policy-now dd[data-field="rate.per"]`)),
	)
	shot("typepolicy-3-viewer.png")
	require.Equal(t, "1m", evalIn[string](t, browser, `document.querySelector('#policy-now dd[data-field="rate.per"]').textContent`))
	require.Equal(t, 0, evalIn[int](t, browser, `document.querySelectorAll("#policy input, #policy select, #policy button, #policy-form").length`),
		"a viewer sees no control that changes the policy")
	require.Empty(t, exceptions(), "JavaScript exceptions in the page")
}
