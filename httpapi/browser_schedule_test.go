package httpapi_test

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/httpapi"
)

// TestScheduleFormTakesEveryAsADurationInBrowser: in headless Chromium,
// the schedule form's "every" is a duration as Go writes one: a bare
// number (no unit) is named under the field and nothing is stored, as is
// core's refusal of 500ms, and 1m30s is stored as 90 s.
func TestScheduleFormTakesEveryAsADurationInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED: the browser test (headless Chromium) does not run with -short")
	}
	t.Parallel()
	e := newEnv(t, httpapi.Config{})
	browser, exceptions := newBrowser(t)
	step, shot := stepper(t, browser, artifacts(t))
	every := `#schedule-form input[name="every"]`

	step("a bare number is not a duration",
		chromedp.Navigate(e.url+"/#/schedules"),
		chromedp.WaitVisible(chromedp.CSS(`#schedule-form`)),
		chromedp.SendKeys(chromedp.CSS(`#schedule-form input[name="name"]`), "tick"),
		chromedp.SendKeys(chromedp.CSS(every), "90"),
		chromedp.SendKeys(chromedp.CSS(`#schedule-form input[name="type"]`), "ping"),
		chromedp.Click(chromedp.CSS(`#schedule-save`)),
		chromedp.WaitVisible(chromedp.CSS(`#schedule-form .field-error[data-field="every"][data-by="page"]`)),
	)
	shot("schedule-1-no-unit.png")
	list, err := e.core.Client.Schedules(t.Context())
	require.NoError(t, err)
	require.Empty(t, list, "nothing stored")

	step("core refuses 500ms (below a second): its error shows under the field",
		chromedp.SetValue(chromedp.CSS(every), "500ms"),
		chromedp.Click(chromedp.CSS(`#schedule-save`)),
		chromedp.WaitVisible(chromedp.CSS(`#schedule-form .field-error[data-field="every"][data-by="core"]`)),
	)
	require.Contains(t, evalIn[string](t, browser, `document.querySelector('#schedule-form .field-error[data-field="every"][data-by="core"]').textContent`),
		"every: 500 ms is outside 1000..")
	list, err = e.core.Client.Schedules(t.Context())
	require.NoError(t, err)
	require.Empty(t, list, "nothing stored")

	step("1m30s is 90 seconds",
		chromedp.SetValue(chromedp.CSS(every), "1m30s"),
		chromedp.Click(chromedp.CSS(`#schedule-save`)),
		chromedp.WaitVisible(chromedp.CSS(`#schedules tr[data-name="tick"]`)),
	)
	shot("schedule-2-saved.png")
	list, err = e.core.Client.Schedules(t.Context())
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, 90*time.Second, list[0].Every)
	require.Empty(t, exceptions(), "JavaScript exceptions in the page")
}
