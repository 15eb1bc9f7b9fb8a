package mcpserver

// registerSessionTools registers the session_* tools: session_start,
// session_call, session_request, session_pending, session_frames,
// session_stderr, session_explain, session_stop.
func (s *Server) registerSessionTools() {
}
