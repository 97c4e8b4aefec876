package redisstore

import (
	"context"
	"strconv"
	"sync"
)

// Job ids and how a request that names only an id finds its job.
//
// Ids come in blocks of idBlock, each block reserved for one job type by
// lua/reserve_ids.lua, which records block → type in the global blocks
// hash once per block. A job's type is then the type of its block, so
// creating a job writes nothing per job outside its type's slot: the job is
// one script on {<type>} (create_jobs), on Redis Cluster too, and a create
// that fails leaves nothing behind. Blocks never change type, so a core
// keeps what it learnt of them in memory, and a request by id usually costs
// no lookup at all.

// idBlock is how many ids a block holds. It is part of the data: blocks
// recorded in Redis are (id - 1) / idBlock, so it never changes.
const idBlock = 1000

// maxKnownBlocks bounds the block → type cache; past it the cache starts
// again (one lookup per block).
const maxKnownBlocks = 1 << 16

// idSpace is a Store's reserved ids and what it knows of blocks.
type idSpace struct {
	mu    sync.Mutex
	open  map[string]idRange // per type: what is left of its reserved blocks
	known map[int64]string   // block → type
}

type idRange struct{ next, last int64 }

func blockOf(id int64) int64 { return (id - 1) / idBlock }

// reserveIDs takes n ids for jobs of jobType: from the type's reserved
// blocks while they last, then from new ones (one round trip per idBlock
// ids). Ids stay unique; with several cores, or several types, they are not
// in creation order (queue order does not depend on ids), and a restart
// leaves gaps.
func (s *Store) reserveIDs(ctx context.Context, jobType string, n int) ([]int64, error) {
	sp := &s.ids
	sp.mu.Lock()
	defer sp.mu.Unlock()
	ids := make([]int64, 0, n)
	r := sp.open[jobType]
	for ; r.next != 0 && r.next <= r.last && len(ids) < n; r.next++ {
		ids = append(ids, r.next)
	}
	if need := n - len(ids); need > 0 {
		count := (need + idBlock - 1) / idBlock
		first, err := s.eval(ctx, reserveBlocks, []string{s.keys.ids(), s.keys.blocks(), s.keys.types()},
			jobType, count, idBlock).Int64()
		if err != nil {
			// The blocks may be reserved all the same (a lost reply, or
			// WAIT fell short: Config.WaitReplicas), but their ids are not
			// used: were a failover to lose a reservation the replicas did
			// not have, the new master could give the same block to
			// another type, and jobs of both would share ids. So while
			// replicas are missing, each create of a type that has no ids
			// left here reserves a block that stays unused (1000 ids and
			// a field of the blocks hash).
			return nil, err
		}
		for b := range int64(count) {
			sp.learn(blockOf(first)+b, jobType)
		}
		r = idRange{next: first, last: first + int64(count)*idBlock - 1}
		for ; len(ids) < n; r.next++ {
			ids = append(ids, r.next)
		}
	}
	if sp.open == nil {
		sp.open = map[string]idRange{}
	}
	sp.open[jobType] = r
	return ids, nil
}

// learn records a block's type. sp.mu is held.
func (sp *idSpace) learn(block int64, jobType string) {
	if sp.known == nil || len(sp.known) >= maxKnownBlocks {
		sp.known = map[int64]string{}
	}
	sp.known[block] = jobType
}

// typesOfIDs returns the type of each id, "" where none is on record: from
// the blocks known, else from the blocks hash in one round trip.
func (s *Store) typesOfIDs(ctx context.Context, ids []int64) ([]string, error) {
	types := make([]string, len(ids))
	var unknown []int
	s.ids.mu.Lock()
	for i, id := range ids {
		if t, ok := s.ids.known[blockOf(id)]; ok && id > 0 {
			types[i] = t
		} else if id > 0 {
			unknown = append(unknown, i)
		}
	}
	s.ids.mu.Unlock()
	if len(unknown) == 0 {
		return types, nil
	}
	blocks := make([]string, len(unknown))
	for n, i := range unknown {
		blocks[n] = strconv.FormatInt(blockOf(ids[i]), 10)
	}
	byBlock, err := s.rdb.HMGet(ctx, s.keys.blocks(), blocks...).Result()
	if err != nil {
		return nil, err
	}
	s.ids.mu.Lock()
	defer s.ids.mu.Unlock()
	for n, i := range unknown {
		if t, ok := byBlock[n].(string); ok {
			types[i] = t
			s.ids.learn(blockOf(ids[i]), t)
		}
	}
	return types, nil
}
