package httpapi_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/httpapi"
	"github.com/kuebus/kuebus/node/nodetest"
)

// TestDashboardNamesTypesOfADeadShard: with one Redis Cluster master down
// (no replica to take over), the dashboard still shows the healthy types'
// counts and a warning line that names the dead master's types. Before, its
// GET /stats failed whole: a toast, and no counts at all.
func TestDashboardNamesTypesOfADeadShard(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED: the browser test (headless Chromium) does not run with -short")
	}
	t.Parallel() // its cluster is its own
	c := nodetest.NewShardCluster(t)
	victim, dead, healthy := nodetest.ShardTypes(t, c, 1)
	e := newEnvOn(t, nodetest.NewCoreOnCluster(t, service.Config{}, c), httpapi.Config{})
	for _, jt := range append(append([]string{}, dead...), healthy...) {
		e.create(map[string]any{"type": jt})
	}
	dir := artifacts(t)
	browser, exceptions := newBrowser(t)
	step, shot := stepper(t, browser, dir)

	step("every type is read: no warning",
		chromedp.Navigate(e.url+"/"),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#types tr[data-type=%q]`, dead[0]))),
	)
	ctx, cancel := context.WithTimeout(browser, waitTimeout)
	defer cancel()
	warnings, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#type-errors").length`))
	require.NoError(t, err)
	require.Zero(t, warnings)

	nodetest.KillMaster(t, c, victim)

	// The list of all types fails (a range over all of them), and says
	// why; a healthy type's view has its counts and the types table.
	step("reload: the list of all types names the dead ones",
		chromedp.Navigate(e.url+"/#/jobs/inactive/all"),
		chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS(`#type-errors`)),
	)
	shot("dead-shard-all.png")
	step("a healthy type's view: its jobs, the healthy types' counts, the warning",
		chromedp.Navigate(fmt.Sprintf("%s/#/jobs/inactive/%s", e.url, healthy[0])),
		chromedp.WaitVisible(chromedp.CSS(`#list tbody tr`)),
		chromedp.WaitVisible(chromedp.CSS(`#type-errors`)),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#types tr[data-type=%q]`, healthy[1]))),
	)
	shot("dead-shard-type.png")
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#type-errors").textContent`))
	require.NoError(t, err)
	for _, jt := range dead {
		require.Contains(t, text, jt)
	}
	for _, jt := range healthy {
		require.NotContains(t, text, jt)
	}
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll('#types tr[data-type=%q]').length`, dead[0])))
	require.NoError(t, err)
	require.Zero(t, rows, "a type that cannot be read has no row of counts")
	require.Empty(t, exceptions(), "JavaScript exceptions in the page")
}
