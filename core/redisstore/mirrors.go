package redisstore

import (
	"cmp"

	"github.com/kuebus/kuebus/core"
)

// A script's reply is usually the job as the script left it: Go decodes
// it and holds no copy of what the script wrote. Where the reply leaves
// out what the script wrote, to spare Redis the work of replying it, Go
// applies the same writes to what it decoded: the mirrors below, each
// naming its Lua source and checked against the stored job by a test.
// Nothing else in Go repeats a script's writes.

// leased decodes the jobs a lease script replied, each as it was before
// the lease, and applies what the lease wrote (lease_job in
// lua/includes/lease_job.lua): active, leased under token by worker until
// now + ttl (0: the job's own ttl), started and updated now, progress 0.
// The lease tests compare it with the stored job (requireStoredAsReplied
// in scripts_lease_test.go).
func leased(res []any, now int64, worker, token string, ttl int64) []core.Job {
	jobs := make([]core.Job, len(res))
	n := 0
	for _, r := range res {
		j := &jobs[n]
		if !decodePairsInto(j, r) {
			*j = core.Job{}
			continue
		}
		j.State, j.Lease, j.WorkerID = core.StateActive, token, worker
		j.LeaseUntil = now + cmp.Or(ttl, j.TTL)
		j.StartedAt, j.UpdatedAt, j.Progress = now, now, 0
		n++
	}
	return jobs[:n]
}

// completedBare is a job a bare complete replied no row for
// (lua/complete.lua with bare "1": nobody would hear its event, the one
// use of the row): what the script made of it, complete with progress
// 100; the fields it did not read are left zero.
// TestABareCompleteStoresTheSameAndRepliesNoRow compares it with the
// stored job.
func completedBare(id int64, jobType string) core.Job {
	return core.Job{ID: id, Type: jobType, State: core.StateComplete, Progress: 100}
}
