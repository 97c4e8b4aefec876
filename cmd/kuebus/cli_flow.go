package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/kuebus/kuebus/core"
)

// runFlowCreate is kuebus flow create FILE.json: the file (- for stdin)
// is create_flow's request, {"jobs":[{"ref","spec","depends_on"},...]};
// the reply, each job's ref, id and state, is printed as JSON.
func runFlowCreate(ctx context.Context, e *env, args []string) error {
	read := func(file string) (core.FlowRequest, error) { return readFlowFile(e, file) }
	return withArg(ctx, e, args, read, func(c *core.Client, req core.FlowRequest) error {
		reply, err := c.CreateFlow(ctx, req.Jobs...)
		if err != nil {
			return err
		}
		return printJSON(e.stdout, reply)
	})
}

// readFlowFile reads create_flow's request from file (- for stdin),
// strictly: a file that cannot be read or is not a flow is a usage error.
func readFlowFile(e *env, file string) (core.FlowRequest, error) {
	var req core.FlowRequest
	var data []byte
	var err error
	if file == "-" {
		data, err = io.ReadAll(os.Stdin)
	} else {
		data, err = os.ReadFile(file)
	}
	if err != nil {
		return req, usagef("%s: %v", e.cmd.path(), err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return req, usagef("%s: %s is not a flow ({\"jobs\":[{\"ref\",\"spec\",\"depends_on\"},...]}): %v", e.cmd.path(), file, err)
	}
	return req, nil
}

// runJobDeps is kuebus job deps ID: the jobs ID depends on, then those
// that wait (or waited) for it, each with its type and state (and a
// dependency's result or error).
func runJobDeps(ctx context.Context, e *env, args []string) error {
	return withJobID(ctx, e, args, func(c *core.Client, id int64) error {
		deps, err := c.Dependencies(ctx, id)
		if err != nil {
			return err
		}
		dependents, err := c.Dependents(ctx, id)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "DEPENDS ON\tTYPE\tSTATE\tRESULT")
		for _, d := range deps {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", d.ID, d.Type, depState(d), depOutcome(d))
		}
		fmt.Fprintln(tw, "\nDEPENDENT\tTYPE\tSTATE\t")
		for _, d := range dependents {
			fmt.Fprintf(tw, "%d\t%s\t%s\t\n", d.ID, d.Type, depState(d))
		}
		return tw.Flush()
	})
}

func depState(d core.DepJob) string {
	if d.Gone {
		return "(removed)"
	}
	return string(d.State)
}

func depOutcome(d core.DepJob) string {
	if d.Error != "" && d.State != core.StateComplete {
		return "error: " + d.Error
	}
	return string(d.Result)
}

// depFlags are job create's flags of dependencies (not schedule set's: a
// schedule's jobs wait for no other job).
type depFlags struct {
	dependsOn, rule *string
}

func (f *depFlags) register(fs *flag.FlagSet) {
	f.dependsOn = fs.String("depends-on", "", "wait for these jobs to complete, `IDS` comma-separated (the job is created waiting)")
	f.rule = fs.String("on-dependency-failure", "", "what becomes of the job when a dependency fails, is cancelled or removed: `RULE` fail (default), ignore or cancel")
}

func (f *depFlags) apply(sp *core.Spec) error {
	if *f.dependsOn != "" {
		for _, s := range strings.Split(*f.dependsOn, ",") {
			id, err := parseID("--depends-on:", strings.TrimSpace(s))
			if err != nil {
				return err
			}
			sp.DependsOn = append(sp.DependsOn, id)
		}
	}
	sp.OnDependencyFailure = core.DepPolicy(*f.rule)
	return nil
}
