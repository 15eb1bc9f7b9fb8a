package live

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/cli/connect"
	"github.com/sonde-mcp/sonde/mcp"
)

// prompts, prompt and complete: prompts/list, prompts/get and
// completion/complete.

// PromptsOptions are the flags of `sonde prompts`.
type PromptsOptions struct {
	Server connect.Flags
}

// NewCmdPrompts is `sonde prompts`.
func NewCmdPrompts(env *cmdutil.Env) *cobra.Command {
	var o PromptsOptions
	return featureCmd(env, &o.Server, "prompts (-- COMMAND [ARG...] | --url URL)",
		"List the server's prompts (all pages)",
		`Start the server, run the handshake, list every prompt (prompts/list, following nextCursor)
with its arguments (required ones marked *), stop the server. --json prints the prompts as a
JSON array.`,
		0, "prompts takes no arguments before --", nil,
		func(ctx context.Context, s *connect.Session, own []string) error {
			return runPrompts(ctx, env, &o, s, own)
		})
}

// runPrompts runs `sonde prompts` on the session.
func runPrompts(ctx context.Context, env *cmdutil.Env, o *PromptsOptions, s *connect.Session, _ []string) error {
	var ps []mcp.Prompt
	err := s.Retry(ctx, func(c *client.Client) (err error) {
		warnUndeclared(env, c, mcp.MethodPromptsList)
		ps, err = c.ListPrompts(ctx)
		return err
	})
	if err != nil {
		return err
	}
	if o.Server.JSON {
		cmdutil.WriteJSON(env.Out, cmdutil.NonNil(ps))
		return nil
	}
	if len(ps) == 0 {
		fmt.Fprintln(env.Err, "sonde: the server lists no prompts")
		return nil
	}
	tw := cmdutil.NewTable(env.Out)
	for _, p := range ps {
		var args []string
		for _, a := range p.Arguments {
			if a.Required {
				args = append(args, a.Name+"*")
			} else {
				args = append(args, a.Name)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Name, strings.Join(args, " "), cmdutil.FirstLine(p.Description))
	}
	return tw.Flush()
}

// PromptOptions are the flags of `sonde prompt`.
type PromptOptions struct {
	Server connect.Flags
	Args   string
}

// NewCmdPrompt is `sonde prompt NAME`.
func NewCmdPrompt(env *cmdutil.Env) *cobra.Command {
	var o PromptOptions
	var args map[string]string
	cmd := featureCmd(env, &o.Server, "prompt NAME [--args JSON] (-- COMMAND [ARG...] | --url URL)",
		"Get one prompt and print its messages",
		`Start the server, run the handshake, get prompt NAME (prompts/get) with --args, print its
messages (role, then content: text as is, other blocks summarised, embedded resources as text
or by size), stop the server.

--args takes a JSON object of strings (prompt arguments are strings), @FILE, or @- for stdin.
--json prints {"ok":true,"result":...} with the whole result.`,
		1, "prompt takes exactly one NAME before --: sonde prompt NAME [--args JSON] -- COMMAND [ARG...]",
		func([]string) (err error) {
			args, err = readStringArgs(o.Args, env.In)
			return err
		},
		func(ctx context.Context, s *connect.Session, own []string) error {
			return runPrompt(ctx, env, &o, s, own, args)
		})
	cmd.Flags().StringVar(&o.Args, "args", "", "prompt arguments: a JSON object of strings, @FILE, or @- for stdin")
	return cmd
}

// runPrompt runs `sonde prompt` on the session.
func runPrompt(ctx context.Context, env *cmdutil.Env, o *PromptOptions, s *connect.Session, own []string, args map[string]string) error {
	var res *mcp.GetPromptResult
	var raw json.RawMessage
	err := s.Retry(ctx, func(c *client.Client) (err error) {
		warnUndeclared(env, c, mcp.MethodPromptsGet)
		res, raw, err = c.GetPrompt(ctx, own[0], args)
		return err
	})
	if err != nil {
		return err
	}
	if o.Server.JSON {
		cmdutil.WriteJSON(env.Out, map[string]any{"ok": true, "result": raw})
		return nil
	}
	printPrompt(env.Out, res)
	return nil
}

// readStringArgs parses prompt arguments: a JSON object whose values are
// strings.
func readStringArgs(text string, stdin io.Reader) (map[string]string, error) {
	raw, err := readJSONObject(text, stdin)
	if err != nil || raw == nil {
		return nil, err
	}
	var m map[string]string
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, cmdutil.Usagef(`--args: prompt arguments are strings, e.g. '{"city":"Paris"}'`)
	}
	return m, nil
}

// printPrompt prints a prompt's messages for a person.
func printPrompt(w io.Writer, r *mcp.GetPromptResult) {
	if r.Description != "" {
		fmt.Fprintln(w, r.Description)
		fmt.Fprintln(w)
	}
	for i, m := range r.Messages {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "[%s]\n", m.Role)
		c := m.Content
		switch {
		case c.Type == "resource" && c.Resource != nil && c.Resource.Text != nil:
			fmt.Fprintf(w, "[resource %s]\n%s\n", c.Resource.URI, strings.TrimRight(*c.Resource.Text, "\n"))
		case c.Type == "resource" && c.Resource != nil:
			b, _ := contentBytes(*c.Resource)
			fmt.Fprintln(w, contentSummary(*c.Resource, len(b)))
		default:
			cmdutil.PrintResult(w, &mcp.CallToolResult{Content: []mcp.Content{c.Content}})
		}
	}
}

// CompleteOptions are the flags of `sonde complete`.
type CompleteOptions struct {
	Server   connect.Flags
	Prompt   string
	Template string
	Arg      string
	Context  []string
}

// NewCmdComplete is `sonde complete`.
func NewCmdComplete(env *cmdutil.Env) *cobra.Command {
	var o CompleteOptions
	var ref mcp.CompleteRef
	var argument mcp.CompleteArgument
	var ctxVals map[string]string
	cmd := featureCmd(env, &o.Server, "complete (--prompt NAME | --resource-template URI) --arg NAME=VALUE [--context NAME=VALUE]... (-- COMMAND [ARG...] | --url URL)",
		"Ask the server to complete a prompt argument or a template variable",
		`Start the server, run the handshake, send completion/complete for argument NAME (its value so
far is VALUE) of prompt --prompt or of resource template --resource-template (the template's
uriTemplate, e.g. 'file:///{path}'), print the values one per line, stop the server.
--context gives the values of other arguments (repeatable). When the server has more values
than it sent, stderr says so. --json prints {"ok":true,"completion":{...}}.`,
		0, "complete takes no arguments before --",
		func([]string) error {
			switch {
			case (o.Prompt == "") == (o.Template == ""):
				return cmdutil.Usagef("give exactly one of --prompt NAME and --resource-template URI")
			case o.Prompt != "":
				ref = mcp.CompleteRef{Type: mcp.RefPrompt, Name: o.Prompt}
			default:
				ref = mcp.CompleteRef{Type: mcp.RefResource, URI: o.Template}
			}
			name, value, ok := strings.Cut(o.Arg, "=")
			if !ok || name == "" {
				return cmdutil.Usagef("--arg NAME=VALUE is required (VALUE may be empty: --arg city=)")
			}
			argument = mcp.CompleteArgument{Name: name, Value: value}
			for _, kv := range o.Context {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" {
					return cmdutil.Usagef(fmt.Sprintf("--context %q: want NAME=VALUE", kv))
				}
				if ctxVals == nil {
					ctxVals = map[string]string{}
				}
				ctxVals[k] = v
			}
			return nil
		},
		func(ctx context.Context, s *connect.Session, own []string) error {
			return runComplete(ctx, env, &o, s, own, ref, argument, ctxVals)
		})
	cmd.Flags().StringVar(&o.Prompt, "prompt", "", "complete an argument of prompt `NAME`")
	cmd.Flags().StringVar(&o.Template, "resource-template", "", "complete a variable of the resource template `URI` (its uriTemplate)")
	cmd.Flags().StringVar(&o.Arg, "arg", "", "the argument to complete and its value so far, `NAME=VALUE`")
	cmd.Flags().StringArrayVar(&o.Context, "context", nil, "the value of another argument, `NAME=VALUE` (repeatable)")
	return cmd
}

// runComplete runs `sonde complete` on the session.
func runComplete(ctx context.Context, env *cmdutil.Env, o *CompleteOptions, s *connect.Session, _ []string, ref mcp.CompleteRef, argument mcp.CompleteArgument, ctxVals map[string]string) error {
	var comp *mcp.Completion
	err := s.Retry(ctx, func(c *client.Client) (err error) {
		warnUndeclared(env, c, mcp.MethodComplete)
		comp, err = c.Complete(ctx, ref, argument, ctxVals)
		return err
	})
	if err != nil {
		return err
	}
	if o.Server.JSON {
		cmdutil.WriteJSON(env.Out, map[string]any{"ok": true, "completion": comp})
		return nil
	}
	for _, v := range comp.Values {
		fmt.Fprintln(env.Out, v)
	}
	switch {
	case comp.Total != nil && *comp.Total > len(comp.Values):
		fmt.Fprintf(env.Err, "sonde: %d of %d values\n", len(comp.Values), *comp.Total)
	case comp.HasMore:
		fmt.Fprintf(env.Err, "sonde: %d values; the server has more\n", len(comp.Values))
	case len(comp.Values) == 0:
		fmt.Fprintln(env.Err, "sonde: no completions")
	}
	return nil
}
