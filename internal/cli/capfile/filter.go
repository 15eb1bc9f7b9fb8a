package capfile

import (
	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/filter"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
)

// filterUsage is the help of --filter, shared by lint, stats and export.
const filterUsage = "keep only the frames and requests a filter query matches (docs/filter.md), e.g. \"method:tools/call status:error duration:>500ms\""

// addFilterFlag adds --filter to cmd.
func addFilterFlag(cmd *cobra.Command, query *string) {
	cmd.Flags().StringVar(query, "filter", "", filterUsage)
}

// eventFilter parses a --filter query and, when it is set, reads the
// capture at path once to learn its requests (so that every event of a
// request is judged with the request's method, tool, outcome and latency).
// keep then says whether an event is kept; events that are neither a frame
// nor a request's (stderr, processes, notes) always are. An empty query
// keeps everything and reads nothing.
func eventFilter(path, query string) (keep func(client.Event) bool, err error) {
	f, err := filter.Parse(query)
	if err != nil {
		return nil, cmdutil.Usagef("--filter: " + err.Error())
	}
	if f.Empty() {
		return func(client.Event) bool { return true }, nil
	}
	reqs := filter.NewRequests()
	if _, _, err := eachEvent(path, nil, reqs.Learn); err != nil {
		return nil, err
	}
	reqs.Rewind()
	return func(ev client.Event) bool {
		it, ok := reqs.Item(ev)
		return !ok || f.Match(&it)
	}, nil
}
