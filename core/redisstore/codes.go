package redisstore

// A replyCode is what a script says of one job, or of the one thing it was
// asked to do: one value per meaning, whichever script replies it. Each
// has a name here and the same name in Lua, written by `go generate` into
// lua/includes/codes_gen.lua (luagen.go) from replyCodes, so that neither
// side compares bare integers.
type replyCode int64

// The codes; what each means is said once, in replyCodes below, which
// codes_gen.lua repeats beside the Lua names.
const (
	codeNoJob            replyCode = 0
	codeNotHolder        replyCode = -1
	codeDone             replyCode = 1
	codeCompletedRemoved replyCode = 2
	codeFailed           replyCode = 3
	codeRepeated         replyCode = 4
	codeFailedRemoved    replyCode = 5
	codeRetrying         replyCode = 6
	codeUnchanged        replyCode = 7
	codeDuplicate        replyCode = 8
	codeSkipped          replyCode = 9
	codePaused           replyCode = 10
	codeLimited          replyCode = 11
	codeWaiting          replyCode = 12
)

// replyCodes names each code in Lua, in the order codes_gen.lua lists them.
var replyCodes = []struct {
	lua  string
	code replyCode
	doc  string
}{
	{"NO_JOB", codeNoJob, "no such job"},
	{"NOT_HOLDER", codeNotHolder, "the lease given is not (or no longer) the job's current one"},
	{"DONE", codeDone, "done as asked"},
	{"COMPLETED_REMOVED", codeCompletedRemoved, "completed, and removed (its retention is true)"},
	{"FAILED", codeFailed, "failed for good"},
	{"REPEATED", codeRepeated, "done before by this very request, sent again: nothing changed"},
	{"FAILED_REMOVED", codeFailedRemoved, "failed for good, and removed (its retention is true)"},
	{"RETRYING", codeRetrying, "a failed attempt: the job runs again, now or after its backoff"},
	{"UNCHANGED", codeUnchanged, "nothing to do: the job (or type) is as asked already, or finished"},
	{"DUPLICATE", codeDuplicate, "not stored: an unfinished job of another id has its unique key"},
	{"SKIPPED", codeSkipped, "a schedule's tick that does not fire (not due, gone, paused, changed, fired)"},
	{"PAUSED", codePaused, "the type is paused: nothing leased"},
	{"LIMITED", codeLimited, "the type's concurrency or rate held the lease back: fewer leased than asked, or none"},
	{"WAITING", codeWaiting, "stored, waiting for its dependencies"},
}

// codeOf reads a code as a script replies it.
func codeOf(v any) replyCode { return replyCode(num(v)) }
