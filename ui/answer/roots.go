package answer

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/ui/form"
	"github.com/sonde-mcp/sonde/ui/list"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// RootCheckedMsg is the result of checking a directory typed into the
// roots editor (the check reads the file system, so it runs in a command).
type RootCheckedMsg struct {
	Root mcp.Root
	Err  error
}

// RootsKeyMap holds the roots editor's bindings.
type RootsKeyMap struct {
	Up, Down, Add, Remove, Apply, Close key.Binding
	// AddDone and AddBack apply while a directory is being typed.
	AddDone, AddBack key.Binding
}

// DefaultRootsKeyMap returns the default bindings.
func DefaultRootsKeyMap() RootsKeyMap {
	nav := list.DefaultKeyMap()
	return RootsKeyMap{
		Up:      nav.Up,
		Down:    nav.Down,
		Add:     key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "add directory")),
		Remove:  key.NewBinding(key.WithKeys("d", "delete"), key.WithHelp("d", "remove")),
		Apply:   key.NewBinding(key.WithKeys("enter", "ctrl+s"), key.WithHelp("enter", "apply (list_changed)")),
		Close:   key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "close, no change")),
		AddDone: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "add")),
		AddBack: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
	}
}

// ShortHelp returns the bindings shown in the help bar.
func (k RootsKeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.AddDone, k.AddBack, k.Add, k.Remove, k.Apply, k.Close}
}

// FullHelp returns every binding.
func (k RootsKeyMap) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }

// Roots edits the roots sonde answers roots/list with. Applying a changed
// list makes the root call client.SetRoots, which sends
// notifications/roots/list_changed.
type Roots struct {
	st      *theme.Styles
	keys    RootsKeyMap
	roots   []mcp.Root
	sel     int
	adding  bool
	input   textinput.Model
	err     string
	changed bool
	w, h    int
}

// NewRoots returns the editor over roots.
func NewRoots(st *theme.Styles, roots []mcp.Root) *Roots {
	r := &Roots{st: st, keys: DefaultRootsKeyMap(), roots: append([]mcp.Root(nil), roots...)}
	r.input = textinput.New()
	r.input.Prompt = "directory: "
	r.input.SetStyles(form.InputStyles(st))
	r.setMode(false)
	return r
}

func (r *Roots) setMode(adding bool) {
	r.adding = adding
	for _, b := range []*key.Binding{&r.keys.Up, &r.keys.Down, &r.keys.Add, &r.keys.Remove, &r.keys.Apply, &r.keys.Close} {
		b.SetEnabled(!adding)
	}
	r.keys.AddDone.SetEnabled(adding)
	r.keys.AddBack.SetEnabled(adding)
	if adding {
		r.input.SetValue("")
		r.input.Focus()
	} else {
		r.input.Blur()
	}
}

// List returns the roots as edited.
func (r *Roots) List() []mcp.Root { return append([]mcp.Root(nil), r.roots...) }

// Changed reports whether the list was edited.
func (r *Roots) Changed() bool { return r.changed }

// Capturing is true while a directory is being typed.
func (r *Roots) Capturing() bool { return r.adding }

// Keys returns the editor's bindings for the help bar.
func (r *Roots) Keys() help.KeyMap { return r.keys }

// Title names the editor for its border.
func (r *Roots) Title() string { return fmt.Sprintf("Roots %d", len(r.roots)) }

// SetSize sets the inner size.
func (r *Roots) SetSize(w, h int) {
	r.w, r.h = w, h
	r.input.SetWidth(max(w-12, 1))
}

// Update handles keys and the result of a directory check. It returns
// Send when the edited list should be applied, Later to close unchanged.
func (r *Roots) Update(msg tea.Msg) (Action, tea.Cmd) {
	switch msg := msg.(type) {
	case RootCheckedMsg:
		if msg.Err != nil {
			r.err = msg.Err.Error()
			return None, nil
		}
		r.roots = append(r.roots, msg.Root)
		r.sel, r.changed, r.err = len(r.roots)-1, true, ""
		r.setMode(false)
		return None, nil
	case tea.KeyPressMsg:
		return r.key(msg)
	case tea.PasteMsg:
		if r.adding {
			var cmd tea.Cmd
			r.input, cmd = r.input.Update(msg)
			return None, cmd
		}
	}
	return None, nil
}

func (r *Roots) key(msg tea.KeyPressMsg) (Action, tea.Cmd) {
	k := r.keys
	switch {
	case key.Matches(msg, k.AddDone):
		dir := strings.TrimSpace(r.input.Value())
		return None, func() tea.Msg {
			root, err := client.DirRoot(dir)
			return RootCheckedMsg{Root: root, Err: err}
		}
	case key.Matches(msg, k.AddBack):
		r.err = ""
		r.setMode(false)
	case r.adding:
		var cmd tea.Cmd
		r.input, cmd = r.input.Update(msg)
		return None, cmd
	case key.Matches(msg, k.Up):
		r.sel = list.Clamp(r.sel-1, len(r.roots))
	case key.Matches(msg, k.Down):
		r.sel = list.Clamp(r.sel+1, len(r.roots))
	case key.Matches(msg, k.Add):
		r.setMode(true)
	case key.Matches(msg, k.Remove):
		if r.sel < len(r.roots) {
			r.roots = append(r.roots[:r.sel], r.roots[r.sel+1:]...)
			r.sel = list.Clamp(r.sel, len(r.roots))
			r.changed = true
		}
	case key.Matches(msg, k.Apply):
		if r.changed {
			return Send, nil
		}
		return Later, nil
	case key.Matches(msg, k.Close):
		return Later, nil
	}
	return None, nil
}

// View draws the editor in the size given to SetSize.
func (r *Roots) View() string {
	st := r.st
	lines := []string{st.Subtle.Render("answers roots/list; a change sends roots/list_changed")}
	if len(r.roots) == 0 {
		lines = append(lines, st.Subtle.Render("no roots · a adds a directory"))
	}
	for i, root := range r.roots {
		marker := "  "
		style := st.Text
		if i == r.sel && !r.adding {
			marker, style = st.Accent.Render("› "), st.Accent
		}
		lines = append(lines, marker+style.Render(textfmt.Clean(root.URI))+st.Subtle.Render("  "+textfmt.Clean(root.Name)))
	}
	if r.adding {
		lines = append(lines, "", r.input.View())
	}
	if r.err != "" {
		lines = append(lines, st.Error.Render("✗ "+textfmt.Clean(r.err)))
	}
	if r.changed {
		lines = append(lines, "", st.Warn.Render("changed: enter applies, esc discards"))
	}
	return textfmt.Lines(strings.Join(lines, "\n"), r.w, r.h)
}
