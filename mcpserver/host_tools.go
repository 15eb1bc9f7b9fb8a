package mcpserver

// registerHostTools registers doctor, sessions_list and session_open.
// Placeholder of the skeleton: the r29-tools branch owns this file and
// replaces it.
func (s *Server) registerHostTools() {}
