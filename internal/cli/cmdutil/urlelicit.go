package cmdutil

import (
	"fmt"
	"io"
	"net/url"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/mcp"
)

// PrintURLElicitations writes on w the URLs that an MCP_URL_REQUIRED error
// (the server's -32042) asks the user to open, each with its message, its
// host and its elicitation id, under a line naming the server; it reports
// whether err was such an error. sonde never opens a URL: the user does,
// then retries the request.
func PrintURLElicitations(w io.Writer, err error, server string) bool {
	els, ok := client.URLElicitations(err)
	if !ok {
		return false
	}
	if server == "" {
		server = "the server"
	}
	what := "1 URL"
	if len(els) > 1 {
		what = fmt.Sprintf("%d URLs", len(els))
	}
	fmt.Fprintf(w, "sonde: %s asks you to open %s before the request can go on (URL elicitation; sonde does not open it):\n", textfmt.Clean(server), what)
	for i, e := range els {
		fmt.Fprintf(w, "  [%d] %s\n", i+1, messageText(e))
		fmt.Fprintf(w, "      %s\n", textfmt.Clean(e.URL))
		fmt.Fprintf(w, "      host %s · elicitation id %s\n", textfmt.Clean(hostOf(e.URL)), textfmt.Clean(e.ElicitationID))
	}
	fmt.Fprintln(w, "sonde: open it in a browser and complete it, then retry the request")
	return true
}

// messageText is an elicitation's message for one line.
func messageText(e mcp.ElicitParams) string {
	if e.Message == "" {
		return "(no message)"
	}
	return textfmt.Clean(e.Message)
}

// hostOf is the host of an elicitation's URL (already checked to be
// absolute, with a host).
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "?"
	}
	return u.Host
}

// ElicitationsJSON is the elicitations of err for --json output, or nil.
func ElicitationsJSON(err error) []map[string]string {
	els, ok := client.URLElicitations(err)
	if !ok {
		return nil
	}
	out := make([]map[string]string, len(els))
	for i, e := range els {
		out[i] = map[string]string{"elicitationId": e.ElicitationID, "url": e.URL, "message": e.Message}
	}
	return out
}
