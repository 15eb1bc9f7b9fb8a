package interactive

import (
	"context"
	"errors"
	"os"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/hostconfig"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/cli/connect"
	"github.com/sonde-mcp/sonde/ui/picker"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// runRootFromConfig runs the interactive UI on a server of the host config
// files: the one --server names, or, with neither --server nor a command
// nor --url and stdin a terminal, the one picked in the server picker
// (over --config FILE's servers, or every one found). Without a terminal
// it prints the help, as before.
func runRootFromConfig(cmd *cobra.Command, env *cmdutil.Env, o *UIOptions, args []string) error {
	f := &o.Server
	picking := f.Server == "" && len(args) == 0 && f.URL == ""
	if !picking || !isTerminal(env.In) {
		if picking && f.Config == "" {
			return cmd.Help()
		}
		_, t, err := connect.Resolve(cmd, f, args, 0, "sonde takes no arguments before --")
		if err != nil {
			return err
		}
		return runTUI(cmd.Context(), env, o, t, nil)
	}
	inputs, err := f.InputValues()
	if err != nil {
		return err
	}
	h, found, err := connect.LoadHosts(f.Config)
	if err != nil {
		return err
	}
	// A picked server that cannot be used (an input sonde cannot ask for,
	// a bad value) brings the picker back with the reason first among its
	// problems; interrupting a question ends sonde.
	// The cursor comes back on the row that failed.
	var failed []string
	at := 0
	for {
		var live []picker.Item // sonde tap's live sessions, listed first
		if o.Tapped.Live != nil {
			live = o.Tapped.Live()
		}
		i, many, ok, err := pick(cmd.Context(), env, h, found, live, inputs, failed, at)
		if err != nil || !ok {
			return err
		}
		if i < len(live) && len(many) == 0 {
			return o.Tapped.Open(cmd.Context(), env, live[i].Session)
		}
		i -= len(live)
		for k := range many {
			many[k] -= len(live)
		}
		if len(many) > 0 {
			// Several marked: the server list over them, as --server A
			// --server B opens it (none starts until opened).
			f.Server, f.Servers = "", nil
			for _, j := range many {
				f.Servers = append(f.Servers, found.Servers[j].Name)
			}
			return runFleetUI(cmd, env, o, args)
		}
		s := found.Servers[i]
		t, err := connect.UseServer(cmd, f, h, s, connect.TermPrompter{Ctx: cmd.Context(), In: env.In, Out: env.Out})
		var ue *cmdutil.UsageError
		if errors.As(err, &ue) && cmd.Context().Err() == nil {
			failed = append([]string{"cannot start " + s.Name + ": " + ue.Msg}, failed...)
			at = i
			continue
		}
		if err != nil {
			return err
		}
		return runTUI(cmd.Context(), env, o, t, nil)
	}
}

// isTerminal reports whether r is a terminal.
func isTerminal(r any) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}

// pick runs the server picker with the cursor on server at and returns the
// index of the row chosen (the live sessions first, then the servers), or
// those marked to open together (many);
// ok is false when the user quit. The
// problems shown are failed (the servers picked before that could not be
// started), the files', and, for each server, a reference that cannot be
// resolved with the --input values given (inputs are asked for only once a
// server is picked).
func pick(ctx context.Context, env *cmdutil.Env, h connect.Hosts, found hostconfig.Found, live []picker.Item, inputs map[string]string, failed []string, at int) (int, []int, bool, error) {
	problems := append([]string(nil), failed...)
	short := func(s string) string { // the home folder as ~, for room
		if h.Home != "" && h.Home != "/" {
			s = strings.ReplaceAll(s, h.Home+string(os.PathSeparator), "~"+string(os.PathSeparator))
			if s == h.Home {
				s = "~"
			}
		}
		return s
	}
	for _, p := range found.Problems {
		problems = append(problems, short(p.Error()))
	}
	items := make([]picker.Item, len(found.Servers))
	for i, s := range found.Servers {
		source := short(s.File)
		if s.Project != "" {
			source += " (project " + short(s.Project) + ")"
		}
		items[i] = picker.Item{Name: s.Name, Where: s.Where(), What: connect.ServerLine(s), Source: source, Disabled: s.Disabled, Approval: pickerApproval(s.Approval)}
		if _, err := h.Resolve(s, inputs, nil); err != nil {
			problems = append(problems, short(err.Error()))
		}
	}
	palette, _ := termPalette()
	sel := 0 // the first row; the server that failed when the picker comes back
	if len(failed) > 0 {
		sel = at + len(live)
	}
	m := picker.New(picker.Options{Items: append(append([]picker.Item(nil), live...), items...), Problems: problems, Files: len(found.Files), Styles: theme.New(palette), Selected: sel})
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithInput(env.In), tea.WithOutput(env.Screen))
	if _, err := p.Run(); err != nil {
		return 0, nil, false, interrupted(err)
	}
	if many := m.ChosenMany(); len(many) > 0 {
		return 0, many, true, nil
	}
	i, ok := m.Chosen()
	return i, nil, ok, nil
}

// pickerApproval is the picker's mark of a Claude Code approval.
func pickerApproval(a hostconfig.Approval) picker.Approval {
	switch a {
	case hostconfig.ApprovalEnabled:
		return picker.Approved
	case hostconfig.ApprovalDisabled:
		return picker.Rejected
	case hostconfig.ApprovalPending:
		return picker.Pending
	}
	return picker.NoApproval
}
