package cli

import (
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
)

// commandGroups sorts sonde's commands for its short help (a screen: 24
// lines at 80 columns). A command not named here is listed under "more".
func commandGroups() []struct{ title, names string } {
	return []struct{ title, names string }{
		{"Inspect a server", "call tools check ping script bench doctor " + featureNames},
		{"Sit beside a host", "tap wrap unwrap sessions watch inject breaks faults clients"},
		{"Read a capture", "replay lint stats diff export timeouts baseline"},
		{"Configured servers", "config servers report"},
		{"More", "demo fixture mcp version completion help"},
	}
}

// featureNames are the one-feature commands (live.NewCmdFeatures), listed
// as one word in the short help.
const featureNames = "prompts prompt resources read complete log-level"

const rootLong = `sonde launches an MCP server (stdio, after --) or connects to one (--url),
and shows live every request in flight, the raw frames and the server's stderr.`

const rootExamples = `  sonde -- npx -y @modelcontextprotocol/server-everything   the interactive UI
  sonde --url http://127.0.0.1:3001/mcp | --server NAME | --all | demo`

// rootHelp prints sonde's short help: what it is, how to start it, its
// commands in groups, and where the rest is.
func rootHelp(cmd *cobra.Command, _ []string) {
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "%s\n\nUsage:\n%s\n\n", rootLong, rootExamples)
	known := map[string]bool{}
	for _, g := range commandGroups() {
		names := strings.Fields(g.names)
		for _, n := range names {
			known[n] = true
		}
		writeGroup(w, g.title, present(cmd, names))
	}
	var more []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() && !known[c.Name()] {
			more = append(more, c.Name())
		}
	}
	sort.Strings(more)
	if len(more) > 0 {
		writeGroup(w, "Also", more)
	}
	fmt.Fprint(w, `
sonde COMMAND --help   one command's usage and flags
sonde help flags       the interactive UI's flags (--url, --server, --all...)
sonde help exit-codes  the exit statuses, one table for every command
docs/commands.md       everything, with examples
`)
}

// present keeps the names that are sonde's commands, in order.
func present(root *cobra.Command, names []string) []string {
	var out []string
	for _, n := range names {
		if c, _, err := root.Find([]string{n}); err == nil && c != root {
			out = append(out, n)
		}
	}
	return out
}

// writeGroup writes a group's title and its command names wrapped at 80
// columns under it.
func writeGroup(w io.Writer, title string, names []string) {
	if len(names) == 0 {
		return
	}
	line := fmt.Sprintf("  %-20s", title+":")
	for i, n := range names {
		if i > 0 && len(line)+1+len(n) > 79 {
			fmt.Fprintln(w, strings.TrimRight(line, " "))
			line = strings.Repeat(" ", 22)
		} else if i > 0 {
			line += " "
		}
		line += n
	}
	fmt.Fprintln(w, line)
}

// addHelpTopics adds sonde help exit-codes and sonde help flags: topics
// (commands without a run) that hold what used to repeat in every help.
func addHelpTopics(root *cobra.Command) {
	codes := &cobra.Command{Use: "exit-codes", Short: "The exit statuses of every sonde command", Long: cmdutil.ExitCodesHelp}
	flags := &cobra.Command{Use: "flags", Short: "The flags of the interactive UI (sonde [flags] -- COMMAND)"}
	flags.SetHelpFunc(func(c *cobra.Command, _ []string) {
		fmt.Fprintf(c.OutOrStdout(), "Flags of sonde (the interactive UI):\n%s", root.LocalFlags().FlagUsagesWrapped(80))
	})
	root.AddCommand(codes, flags)
}

// suggestCommands makes every command that has subcommands answer an
// unknown one with cobra's "Did you mean this?" suggestions.
func suggestCommands(c *cobra.Command) {
	if c.HasSubCommands() {
		c.SuggestionsMinimumDistance = 2 // cobra's own default, which SuggestionsFor alone does not set
		inner := c.Args
		c.Args = func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 && cmd.ArgsLenAtDash() != 0 {
				if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
					return cmdutil.Usagef(fmt.Sprintf("unknown command %q for %q; did you mean %s? (see %s --help)",
						args[0], cmd.CommandPath(), strings.Join(s, " or "), cmd.CommandPath()))
				}
			}
			if inner == nil {
				return nil
			}
			return inner(cmd, args)
		}
	}
	for _, sub := range c.Commands() {
		suggestCommands(sub)
	}
}

var unknownFlag = regexp.MustCompile(`^unknown (?:shorthand )?flag: '?-?-([^' ]+)`)

// flagError is a usage error for a bad flag, with the nearest flag of the
// command as "did you mean".
func flagError(cmd *cobra.Command, err error) error {
	msg := err.Error()
	if m := unknownFlag.FindStringSubmatch(msg); m != nil {
		if near := nearestFlag(cmd, m[1]); near != "" {
			msg += "; did you mean --" + near + "?"
		}
	}
	return cmdutil.Usagef(msg + " (see " + cmd.CommandPath() + " --help)")
}

// nearestFlag is the name of cmd's flag nearest to typed (at most two
// edits, or typed as its prefix), or "".
func nearestFlag(cmd *cobra.Command, typed string) string {
	best, bestD := "", 3
	visit := func(f *pflag.Flag) {
		d := editDistance(typed, f.Name)
		if strings.HasPrefix(f.Name, typed) && len(typed) >= 3 {
			d = min(d, 1)
		}
		if d < bestD || (d == bestD && f.Name < best) {
			best, bestD = f.Name, d
		}
	}
	cmd.Flags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
