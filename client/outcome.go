package client

// Errored reports whether a request that ended in state s is an error, as
// every count of sonde has it: the status bar's errors, sonde replay's e,
// sonde stats' errors and the filter's status:error. isError says whether
// the result it got had isError set (the tool failed).
//
// An error is a JSON-RPC error answer, a result with isError, or an end
// without an answer that the caller did not ask for (a timeout, the server
// exiting, the session closed under it, a protocol break, a refusal before
// it was sent). A cancel by the caller is "cancelled", not an error; a
// retry after input_required continues the call; a request not yet ended
// is neither.
func Errored(s State, isError bool) bool {
	switch s {
	case StateResolved, StateAnswered:
		return isError
	case StateCancelled, StateRetried:
		return false
	}
	return s.Final()
}
