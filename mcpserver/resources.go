package mcpserver

// registerResources registers the sonde:// capture resources.
// Placeholder of the skeleton: the r29-tools branch owns this file and
// replaces it.
func (s *Server) registerResources() {}
