package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/nats-io/nats.go"

	"github.com/kuebus/kuebus/promoter"
)

// runCluster prints the promoter ring as one node sees it: the leader, the
// node that answered, and every member with its state.
func runCluster(ctx context.Context, e *env, args []string) error {
	var cf connFlags
	fs := e.flags()
	cf.register(fs)
	asJSON := fs.Bool("json", false, "print cluster.status's reply as JSON")
	if _, err := e.parse(fs, args, 0, 0); err != nil {
		return err
	}
	subj, err := cf.check()
	if err != nil {
		return err
	}
	nc, err := cf.connect()
	if err != nil {
		return err
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(ctx, cf.timeout)
	defer cancel()
	st, err := promoter.FetchStatus(ctx, nc, subj)
	if errors.Is(err, nats.ErrNoResponders) {
		return fmt.Errorf("no promoter node answers at %s: is a `kuebus node` with the promoter role running (with --prefix %q)?", redactURL(cf.url), cf.prefix)
	}
	if err != nil {
		return cf.explain(err)
	}
	if *asJSON {
		out, err := json.MarshalIndent(st, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(e.stdout, "%s\n", out)
		return err
	}
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "leader\t%s\nself\t%s\n\nNAME\tADDR\tSTATE\n", st.Leader, st.Self)
	for _, m := range st.Members {
		fmt.Fprintf(w, "%s\t%s\t%s\n", m.Name, m.Addr, m.State)
	}
	return w.Flush()
}
