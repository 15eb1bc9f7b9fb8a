package live

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/cli/connect"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
)

// resources and read: resources/list, resources/templates/list and
// resources/read.

// ResourcesOptions are the flags of `sonde resources`.
type ResourcesOptions struct {
	Server connect.Flags
}

// NewCmdResources is `sonde resources`.
func NewCmdResources(env *cmdutil.Env) *cobra.Command {
	var o ResourcesOptions
	return featureCmd(env, &o.Server, "resources (-- COMMAND [ARG...] | --url URL)",
		"List the server's resources and resource templates (all pages)",
		`Start the server, run the handshake, list every resource (resources/list) and every
resource template (resources/templates/list), following nextCursor, and stop the server.
A server that answers templates/list with -32601 has no templates (a warning says so).
--json prints {"resources":[...],"resourceTemplates":[...]}.`,
		0, "resources takes no arguments before --", nil,
		func(ctx context.Context, s *connect.Session, own []string) error {
			return runResources(ctx, env, &o, s, own)
		})
}

// runResources runs `sonde resources` on the session.
func runResources(ctx context.Context, env *cmdutil.Env, o *ResourcesOptions, s *connect.Session, _ []string) error {
	var res []mcp.Resource
	var tpls []mcp.ResourceTemplate
	err := s.Retry(ctx, func(c *client.Client) (err error) {
		warnUndeclared(env, c, mcp.MethodResourcesList)
		if res, err = c.ListResources(ctx); err != nil {
			return err
		}
		tpls, err = c.ListResourceTemplates(ctx)
		var ce *client.Error
		if errors.As(err, &ce) && ce.RPC != nil && ce.RPC.Code == jsonrpc.CodeMethodNotFound {
			fmt.Fprintln(env.Err, "sonde: warning: the server does not implement resources/templates/list (-32601)")
			tpls, err = nil, nil
		}
		return err
	})
	if err != nil {
		return err
	}
	if o.Server.JSON {
		cmdutil.WriteJSON(env.Out, map[string]any{"resources": cmdutil.NonNil(res), "resourceTemplates": cmdutil.NonNil(tpls)})
		return nil
	}
	if len(res) == 0 && len(tpls) == 0 {
		fmt.Fprintln(env.Err, "sonde: the server lists no resources and no templates")
		return nil
	}
	tw := cmdutil.NewTable(env.Out)
	for _, r := range res {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.URI, r.Name, r.MimeType, cmdutil.FirstLine(r.Description))
	}
	if len(tpls) > 0 {
		if len(res) > 0 {
			fmt.Fprintln(tw)
		}
		fmt.Fprintln(tw, "templates:")
		for _, r := range tpls {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.URITemplate, r.Name, r.MimeType, cmdutil.FirstLine(r.Description))
		}
	}
	return tw.Flush()
}

// ReadOptions are the flags of `sonde read`.
type ReadOptions struct {
	Server connect.Flags
	Out    string
}

// NewCmdRead is `sonde read URI`.
func NewCmdRead(env *cmdutil.Env) *cobra.Command {
	var o ReadOptions
	cmd := featureCmd(env, &o.Server, "read URI [--out FILE] (-- COMMAND [ARG...] | --url URL)",
		"Read one resource and print it",
		`Start the server, run the handshake, read URI (resources/read), print it, stop the server.
Text contents are printed as is. Binary contents (blob) are summarised by URI, size and MIME
type; --out FILE writes the decoded bytes of the first content (text or blob) to FILE.
--json prints {"ok":true,"result":...} with the whole result.`,
		1, "read takes exactly one URI before --: sonde read URI -- COMMAND [ARG...]", nil,
		func(ctx context.Context, s *connect.Session, own []string) error {
			return runRead(ctx, env, &o, s, own)
		})
	cmd.Flags().StringVar(&o.Out, "out", "", "write the decoded bytes of the first content to `FILE`")
	return cmd
}

// runRead runs `sonde read` on the session.
func runRead(ctx context.Context, env *cmdutil.Env, o *ReadOptions, s *connect.Session, own []string) error {
	var res *mcp.ReadResourceResult
	var raw json.RawMessage
	err := s.Retry(ctx, func(c *client.Client) (err error) {
		warnUndeclared(env, c, mcp.MethodResourcesRead)
		res, raw, err = c.ReadResource(ctx, own[0])
		return err
	})
	if err != nil {
		return err
	}
	var data [][]byte
	for i, rc := range res.Contents {
		b, err := contentBytes(rc)
		if err != nil {
			return &client.Error{Code: client.CodeProtocol, Message: fmt.Sprintf("resources/read %s: contents[%d].blob is not base64: %v", own[0], i, err)}
		}
		data = append(data, b)
	}
	if o.Out != "" {
		if len(data) == 0 {
			return &client.Error{Code: client.CodeProtocol, Message: "resources/read " + own[0] + ": no contents to write to " + o.Out}
		}
		if err := os.WriteFile(o.Out, data[0], 0o644); err != nil {
			return &cmdutil.ExitStatus{Code: cmdutil.ExitUsage, Msg: "--out " + o.Out + ": " + err.Error()}
		}
		if len(data) > 1 {
			fmt.Fprintf(env.Err, "sonde: warning: %d contents; only the first was written to %s\n", len(data), o.Out)
		}
	}
	if o.Server.JSON {
		cmdutil.WriteJSON(env.Out, map[string]any{"ok": true, "result": raw})
		return nil
	}
	for i, rc := range res.Contents {
		switch {
		case rc.Text != nil && o.Out == "":
			fmt.Fprint(env.Out, *rc.Text)
			if !strings.HasSuffix(*rc.Text, "\n") {
				fmt.Fprintln(env.Out)
			}
		default:
			fmt.Fprintln(env.Out, contentSummary(rc, len(data[i])))
		}
		if i == 0 && o.Out != "" {
			fmt.Fprintf(env.Out, "written to %s\n", o.Out)
		}
	}
	return nil
}

// contentBytes is a resource content's bytes: the text, or the decoded blob.
func contentBytes(rc mcp.ResourceContents) ([]byte, error) {
	if rc.Blob != nil {
		return base64.StdEncoding.DecodeString(*rc.Blob)
	}
	if rc.Text != nil {
		return []byte(*rc.Text), nil
	}
	return nil, nil
}

// contentSummary is one line about a resource content that is not printed.
func contentSummary(rc mcp.ResourceContents, size int) string {
	kind := "text"
	if rc.Blob != nil {
		kind = "blob"
	}
	mime := rc.MimeType
	if mime == "" {
		mime = "no MIME type"
	}
	return fmt.Sprintf("[%s %s, %d bytes, %s]", kind, rc.URI, size, mime)
}
