package core

import "github.com/kuebus/kuebus/bus"

// Method is one RPC method of the protocol with its request and reply
// types: the protocol's contract in Go. docs/schema/kuebus.schema.json is
// written from this list and the types' JSON tags (core's schema test
// checks the file against them, and that every method a running core
// serves is here).
type Method struct {
	Name    string
	Request any
	Reply   any
}

// Methods lists every method of core (docs/protocol.md §3), in the order
// of the protocol's sections.
var Methods = []Method{
	{bus.MethodCreate, Spec{}, Job{}},
	{bus.MethodCreateBulk, BulkRequest{}, BulkReply{}},
	{bus.MethodGet, GetRequest{}, Job{}},
	{bus.MethodExists, IDRequest{}, ExistsReply{}},
	{bus.MethodRemove, IDRequest{}, Job{}},
	{bus.MethodLog, IDRequest{}, LogReply{}},
	{bus.MethodAddLog, AddLogRequest{}, Empty{}},
	{bus.MethodRange, RangeRequest{}, JobsReply{}},
	{bus.MethodCount, CountRequest{}, CountReply{}},
	{bus.MethodTypes, Empty{}, TypesReply{}},
	{bus.MethodIDs, IDsRequest{}, IDsReply{}},
	{bus.MethodStats, StatsRequest{}, Stats{}},
	{bus.MethodSetState, SetStateRequest{}, Job{}},
	{bus.MethodSetPriority, SetPriorityRequest{}, Job{}},
	{bus.MethodPromote, LimitRequest{}, MoveReply{}},
	{bus.MethodLease, LeaseRequest{}, JobsReply{}},
	{bus.MethodComplete, LeaseOp{}, Empty{}},
	{bus.MethodFail, LeaseOp{}, Job{}},
	{bus.MethodTouch, LeaseOp{}, TouchReply{}},
	{bus.MethodRelease, LeaseOp{}, Empty{}},
	{bus.MethodRejoin, LeaseOp{}, Empty{}},
	{bus.MethodProgress, LeaseOp{}, Empty{}},
	{bus.MethodBatch, BatchRequest{}, BatchReply{}},
	{bus.MethodRescue, RescueRequest{}, MoveReply{}},
	{bus.MethodPause, PauseRequest{}, PauseReply{}},
	{bus.MethodResume, PauseRequest{}, PauseReply{}},
	{bus.MethodCancel, CancelRequest{}, Job{}},
	{bus.MethodBulk, BulkActionRequest{}, BulkActionReply{}},
	{bus.MethodClean, LimitRequest{}, CleanReply{}},
	{bus.MethodScheduleSet, ScheduleSetRequest{}, Schedule{}},
	{bus.MethodScheduleList, Empty{}, SchedulesReply{}},
	{bus.MethodScheduleRemove, NameRequest{}, Empty{}},
	{bus.MethodScheduleFire, LimitRequest{}, FireReply{}},
	{bus.MethodScheduleRun, NameRequest{}, Job{}},
	{bus.MethodSearch, SearchRequest{}, SearchReply{}},
	{bus.MethodHistory, HistoryRequest{}, HistoryReply{}},
	{bus.MethodFailedErrors, FailedErrorsRequest{}, FailedErrorsReply{}},
	{bus.MethodHeartbeat, Heartbeat{}, Empty{}},
	{bus.MethodWorkers, Empty{}, WorkersReply{}},
	{bus.MethodTypeSet, TypePolicy{}, TypePolicy{}},
	{bus.MethodTypeGet, TypeRequest{}, TypePolicy{}},
	{bus.MethodTypeList, Empty{}, TypePoliciesReply{}},
	{bus.MethodExplain, IDRequest{}, Explanation{}},
	{bus.MethodCreateFlow, FlowRequest{}, FlowReply{}},
	{bus.MethodDependencies, IDRequest{}, DepsReply{}},
	{bus.MethodDependents, IDRequest{}, DepsReply{}},
}
