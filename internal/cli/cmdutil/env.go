// Package cmdutil is what sonde's command families share: the Env of a run
// (its streams, and what it learnt), the exit statuses and the errors that
// carry them, the output helpers (JSON lines, tables, tool results, the URLs
// of a URL elicitation), sonde's version, and the registry of the clients
// a run started.
package cmdutil

import "io"

// Env is the environment of one run of the command line: its standard
// streams (tests pass buffers), and what the run learnt on the way.
type Env struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer

	// server is the name and version of the server the run last
	// completed a handshake with, for what Main prints after the command.
	server string
}

// SetServer records the server (name and version) the run completed a
// handshake with.
func (e *Env) SetServer(name string) { e.server = name }

// ServerName is the server the run last completed a handshake with (""
// if none).
func (e *Env) ServerName() string { return e.server }
