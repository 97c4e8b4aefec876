-- The order of a type's jobs index (keys.go: jobs): creation order. A
-- job's score there is created_at × 1000 + k, where k (0..999) is its
-- place among the jobs its core (its Store) created in that ms: the jobs
-- of one create call take places one after another, in the call's order
-- (they share created_at), across types, and the calls one core makes in
-- one ms follow one another (Store.Create, createOrder in store.go); a
-- schedule's tick takes one place too. Past 999 jobs of one core in one ms
-- k stays 999, so that they never pass a later ms's jobs: they tie.
-- created_at × 1000 + 999 stays below 2^53, so a double holds it exactly,
-- until created_at reaches 2^53/1000 ms, in the year 2255. Jobs of one
-- score (two cores' jobs in the same ms and place, or past place 999)
-- fall back to Redis's order of equal scores: their members (ids) as
-- bytes.
--
-- Earlier versions scored a job by its id (score = member = id), always
-- below JOBS_ORDER_OLD, while created_at × 1000 of any real clock is above
-- it (created_at past 2001-09-09): jobs_rescore.lua moves those.
local JOBS_ORDER_OLD = '1000000000000000' -- 1e15, as Redis reads a score

-- jobs_score is the score in jobs of a job created at created_at (unix ms,
-- a string or a number) with place k in its call, as Redis takes it: an
-- integer's digits, exact.
local function jobs_score(created_at, k)
  return string.format('%.0f', tonumber(created_at) * 1000 + math.min(k, 999))
end
