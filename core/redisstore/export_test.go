package redisstore

import "context"

// ReplyCode names a script's reply code for the tests of package
// redisstore_test, which run scripts directly.
func ReplyCode(lua string) int64 {
	for _, c := range replyCodes {
		if c.lua == lua {
			return int64(c.code)
		}
	}
	panic("redisstore: no reply code " + lua)
}

// RunAgingRerank runs aging_rerank.lua once over a type's jobs after the
// id after, looking at limit of them.
func RunAgingRerank(ctx context.Context, s *Store, jobType string, after int64, limit int) (int64, error) {
	return s.runAgingRerank(ctx, s.keys.ofType(jobType), after, limit)
}
