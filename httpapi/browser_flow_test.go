package httpapi_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/httpapi"
)

// TestFlowViewInBrowser: in headless Chromium, a diamond made by POST
// /flow (top, two sides that depend on it, a bottom that depends on both)
// is drawn from the bottom job's page as 4 boxes in 3 layers with 4
// edges, each box showing its job's state; the drawing follows the flow's
// jobs live (and only theirs), and clicking a box opens that job's page.
func TestFlowViewInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED: the browser test (headless Chromium) does not run with -short")
	}
	t.Parallel()
	e := newEnv(t, httpapi.Config{})
	var flow core.FlowReply
	e.ok(http.StatusCreated, "POST", "/flow", map[string]any{"jobs": []map[string]any{
		{"ref": "top", "spec": map[string]any{"type": "extract"}},
		{"ref": "left", "spec": map[string]any{"type": "resize"}, "depends_on": []any{"top"}},
		{"ref": "right", "spec": map[string]any{"type": "resize"}, "depends_on": []any{"top"}},
		{"ref": "bottom", "spec": map[string]any{"type": "zip"}, "depends_on": []any{"left", "right"}},
	}}, &flow)
	browser, exceptions := newBrowser(t)
	step, shot := stepper(t, browser, artifacts(t))
	box := func(ref string) string { return fmt.Sprintf(`#flow g.job[data-id="%d"]`, flow.IDOf(ref)) }

	step("the bottom job's page links to its flow",
		chromedp.Navigate(fmt.Sprintf("%s/#/job/%d", e.url, flow.IDOf("bottom"))),
		chromedp.WaitVisible(chromedp.CSS(`#flow-link`)),
		chromedp.Click(chromedp.CSS(`#flow-link`)),
		chromedp.WaitVisible(chromedp.CSS(`#flow[data-jobs="4"][data-edges="4"][data-layers="3"][data-cut="0"]`)),
	)
	shot("flow-1-diamond.png")
	attr := func(sel, name string) string {
		return evalIn[string](t, browser, fmt.Sprintf(`document.querySelector(%q).dataset.%s`, sel, name))
	}
	for ref, want := range map[string][2]string{
		"top": {"0", "inactive"}, "left": {"1", "waiting"}, "right": {"1", "waiting"}, "bottom": {"2", "waiting"},
	} {
		require.Equal(t, want[0], attr(box(ref), "layer"), "%s's layer", ref)
		require.Equal(t, want[1], attr(box(ref), "state"), "%s's state", ref)
		require.Equal(t, want[1], evalIn[string](t, browser, fmt.Sprintf(`document.querySelector(%q).textContent`, box(ref)+" text.state")), "%s shows its state", ref)
	}
	stroke := func(ref string) string {
		return evalIn[string](t, browser, fmt.Sprintf(`getComputedStyle(document.querySelector(%q)).stroke`, box(ref)+" rect:not(.under)"))
	}
	require.Equal(t, stroke("left"), stroke("bottom"), "one colour per state")
	require.NotEqual(t, stroke("top"), stroke("bottom"), "the inactive box is not coloured as the waiting ones")
	require.NotEqual(t, "rgb(0, 0, 0)", stroke("top"))
	edges := evalIn[[]string](t, browser, `[...document.querySelectorAll("#flow path.edge")].map((p) => p.dataset.from + ">" + p.dataset.to).sort()`)
	want := []string{}
	for _, pair := range [][2]string{{"top", "left"}, {"top", "right"}, {"left", "bottom"}, {"right", "bottom"}} {
		want = append(want, fmt.Sprintf("%d>%d", flow.IDOf(pair[0]), flow.IDOf(pair[1])))
	}
	require.ElementsMatch(t, want, edges, "an edge from each dependency to the job that waits for it")

	// The page reads the flow again after an event about one of its jobs,
	// and not after one about a job it does not draw.
	reads := func() int {
		return evalIn[int](t, browser, `performance.getEntriesByType("resource").filter((e) => e.name.endsWith("/deps")).length`)
	}
	before := reads()
	e.create(map[string]any{"type": "unrelated"})
	step("a job outside the flow changes: the page reads its counts, not the flow",
		chromedp.WaitVisible(chromedp.CSS(`#side-types a[data-type="unrelated"]`)),
	)
	require.Equal(t, before, reads(), "no walk for a job outside the flow")
	leased, err := e.core.Client.Lease(t.Context(), core.LeaseRequest{Types: []string{"extract"}})
	require.NoError(t, err)
	require.Len(t, leased, 1)
	require.NoError(t, e.core.Client.Complete(t.Context(), core.LeaseOp{ID: leased[0].ID, Lease: leased[0].Lease}))
	step("the top completes: the flow is drawn again, both sides ready",
		chromedp.WaitVisible(chromedp.CSS(box("top")+`[data-state="complete"]`)),
		chromedp.WaitVisible(chromedp.CSS(box("left")+`[data-state="inactive"]`)),
		chromedp.WaitVisible(chromedp.CSS(box("right")+`[data-state="inactive"]`)),
		chromedp.WaitVisible(chromedp.CSS(box("bottom")+`[data-state="waiting"]`)),
	)
	shot("flow-2-live.png")
	require.Greater(t, reads(), before)

	step("clicking a box opens that job",
		chromedp.Click(chromedp.CSS(box("top")+" rect:not(.under)")),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#job[data-id="%d"][data-state="complete"]`, flow.IDOf("top")))),
	)
	shot("flow-3-opened.png")
	require.Empty(t, exceptions(), "JavaScript exceptions in the page")
}

// TestFlowViewStopsAt500JobsInBrowser: a fan-in of 600 parents into one
// child is more than the flow view reads; from the child it draws 500
// jobs (the child and 499 parents, in 2 layers) and says that it stopped.
func TestFlowViewStopsAt500JobsInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED: the browser test (headless Chromium) does not run with -short")
	}
	t.Parallel()
	e := newEnv(t, httpapi.Config{})
	jobs := []map[string]any{}
	parents := []any{}
	for i := range 600 {
		ref := fmt.Sprintf("p%d", i)
		jobs = append(jobs, map[string]any{"ref": ref, "spec": map[string]any{"type": "resize"}})
		parents = append(parents, ref)
	}
	jobs = append(jobs, map[string]any{"ref": "zip", "spec": map[string]any{"type": "zip"}, "depends_on": parents})
	var flow core.FlowReply
	e.ok(http.StatusCreated, "POST", "/flow", map[string]any{"jobs": jobs}, &flow)
	browser, exceptions := newBrowser(t)
	step, shot := stepper(t, browser, artifacts(t))
	step("the child's flow stops at 500 jobs and says so",
		chromedp.Navigate(fmt.Sprintf("%s/#/job/%d/flow", e.url, flow.IDOf("zip"))),
		chromedp.WaitVisible(chromedp.CSS(`#flow[data-jobs="500"][data-edges="499"][data-layers="2"][data-cut="1"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#flow-cut`)),
	)
	shot("flow-4-cut.png")
	require.Contains(t, evalIn[string](t, browser, `document.querySelector("#flow-cut").textContent`), "more than 500 jobs")
	require.Equal(t, "1", evalIn[string](t, browser, fmt.Sprintf(`document.querySelector('#flow g.job[data-id="%d"]').dataset.layer`, flow.IDOf("zip"))))
	require.Empty(t, exceptions(), "JavaScript exceptions in the page")
}
