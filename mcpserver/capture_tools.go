package mcpserver

// registerCaptureTools registers capture_lint, capture_stats, capture_diff
// and replay_against. Placeholder of the skeleton: the r29-tools branch
// owns this file and replaces it.
func (s *Server) registerCaptureTools() {}
