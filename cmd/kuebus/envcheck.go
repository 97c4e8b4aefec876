package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	clusterconfig "github.com/kuebus/kuebus/cluster-config"
)

// envPrefix starts the name of every variable kuebus reads.
const envPrefix = "KUEBUS_"

// knownEnv lists every KUEBUS_* variable something of kuebus reads: the
// node config's (cluster-config EnvVars), the client commands' own, and
// those of the repository's scripts and tests, which a developer's shell
// may hold while running the binary.
func knownEnv() []string {
	names := []string{
		envConfig, envNATSURL, envContext,
		envNATSToken, envNATSUser, envNATSPassword, envNATSNkey, envNATSCreds,
		envNATSTLSCA, envNATSTLSCert, envNATSTLSKey,
		envHTTPToken, envHTTPBasic, envHTTPMetricsToken,
		// scripts/*.sh, examples/node and the tests
		"KUEBUS_BIN", "KUEBUS_TOUR_TYPE", "KUEBUS_TEST_ARTIFACTS", "KUEBUS_TEST_WORKER_NATS",
	}
	for _, v := range clusterconfig.EnvVars() {
		names = append(names, v.Name)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// warnUnknownEnv writes one line for each KUEBUS_* variable of environ that
// nothing reads: a misspelled variable is otherwise silently ignored, and
// the setting it was meant for keeps its default. The line names the known
// variable closest in spelling, when one is close.
func warnUnknownEnv(w io.Writer, environ []string) {
	known := knownEnv()
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, envPrefix) || slices.Contains(known, name) {
			continue
		}
		msg := fmt.Sprintf("kuebus: warning: $%s is not a kuebus variable and is ignored", name)
		if near := nearest(name, known); near != "" {
			msg += fmt.Sprintf(" (did you mean $%s?)", near)
		}
		fmt.Fprintln(w, msg)
	}
}

// nearest returns the name of names closest to s in edit distance, when it
// is close enough to be a likely misspelling (a third of s's length, at
// most), else "".
func nearest(s string, names []string) string {
	best, bestDist := "", len(s)/3+1
	for _, n := range names {
		if d := editDistance(s, n); d < bestDist {
			best, bestDist = n, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, in bytes: variable
// names are ASCII.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
