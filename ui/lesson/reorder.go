package lesson

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// ReorderRule is the fault rule the reorder step's server runs behind
// (sonde tap --fault): the tap holds three echo answers and hands them
// over last first (or after 2s, whatever it holds).
const ReorderRule = "reorder:to-host,tool=echo,window=3,ms=2000"

// ReorderFunc returns a client for a second server behind sonde tap with
// ReorderRule, not connected yet, and how to connect it. The lesson closes
// it.
type ReorderFunc func() (*client.Client, client.Dialer, error)

// reorderWait bounds the reorder step.
const reorderWait = 30 * time.Second

// reorderMsg carries what the reorder step saw.
type reorderMsg struct {
	r   *Reordered
	err error
}

// Reordered is what the reorder step saw: the calls in the order they were
// sent, and the answers in the order they arrived.
type Reordered struct {
	Sent    []ReorderCall // in the order sent
	Arrived []ReorderCall // the same calls, in the order their answers arrived
}

// ReorderCall is one echo call of the reorder step.
type ReorderCall struct {
	ID     jsonrpc.ID
	Value  string // what it asked the server to echo
	Answer string // the text its answer carried ("" for none)
}

// RunReorder runs the reorder step against the server start gives: it
// sends echo a, b and c (the server answers them in that order, 40ms
// apart) and waits for the three answers, which the tap reverses; the
// client is closed before it returns.
func RunReorder(start ReorderFunc) (*Reordered, error) {
	c, sub, ctx, cancel, err := startAside(start, reorderWait)
	if err != nil {
		return nil, err
	}
	defer cancel()
	defer c.Close()
	r := &Reordered{}
	var calls []*client.Call
	for i, v := range []string{"a", "b", "c"} {
		raw, _ := json.Marshal(map[string]any{"value": v, "delay_ms": 40 * i})
		call := c.GoTool(ctx, "echo", raw, client.CallOptions{})
		calls = append(calls, call)
		r.Sent = append(r.Sent, ReorderCall{ID: call.ID, Value: v})
	}
	var wg sync.WaitGroup
	for i, call := range calls {
		wg.Go(func() {
			if res, err := call.Wait(); err == nil {
				r.Sent[i].Answer = firstText(res) // each goroutine its own element
			}
		})
	}
	wg.Wait()
	c.Close()
	byID := map[jsonrpc.ID]ReorderCall{}
	for _, s := range r.Sent {
		byID[s.ID] = s
	}
	for ev := range sub.C {
		if ev.Kind == client.EvFrame && ev.Frame.Dir == client.In && ev.Frame.Verdict == client.VerdictResolved {
			if s, ok := byID[ev.Frame.Msg.ID]; ok {
				r.Arrived = append(r.Arrived, s)
			}
		}
	}
	if len(r.Arrived) != len(r.Sent) {
		return r, fmt.Errorf("%d of %d answers arrived", len(r.Arrived), len(r.Sent))
	}
	return r, nil
}

// Lines tells what happened: the order sent, the order the answers
// arrived, and what matching by id and by order made of them.
func (r *Reordered) Lines() []string {
	var sent, arrived, byID, fifo []string
	wrong := 0
	for i, s := range r.Sent {
		sent = append(sent, fmt.Sprintf("id %s %q", s.ID, s.Value))
		byID = append(byID, fmt.Sprintf("%s ← %q", s.Value, s.Answer))
		if i < len(r.Arrived) {
			a := r.Arrived[i]
			mark := ""
			if a.ID != s.ID {
				mark, wrong = " WRONG", wrong+1
			}
			fifo = append(fifo, fmt.Sprintf("%s ← %q%s", s.Value, a.Answer, mark))
		}
	}
	for _, a := range r.Arrived {
		arrived = append(arrived, fmt.Sprintf("id %s %q", a.ID, a.Answer))
	}
	return []string{
		"sent:     " + strings.Join(sent, ", "),
		"arrived:  " + strings.Join(arrived, ", "),
		"by id:    " + strings.Join(byID, ", "),
		fmt.Sprintf("by order: %s (%d wrong)", strings.Join(fifo, ", "), wrong),
	}
}

// reorderCmd runs the reorder step off the UI loop.
func (m *Model) reorderCmd() tea.Cmd {
	start := m.opts.Reorder
	if start == nil {
		return func() tea.Msg {
			return reorderMsg{err: fmt.Errorf("it needs a server command sonde can start behind sonde tap (not --url)")}
		}
	}
	return func() tea.Msg {
		r, err := RunReorder(start)
		return reorderMsg{r: r, err: err}
	}
}

// reorderText is the narration of the reorder step.
func (m *Model) reorderText() string {
	seen := "running…"
	switch {
	case m.reorderErr != nil:
		seen = "not shown: " + textfmt.CleanBlock(m.reorderErr.Error())
	case m.reordered != nil:
		lines := m.reordered.Lines()
		for i, l := range lines {
			lines[i] = textfmt.Escape(l)
		}
		seen = strings.Join(lines, "\n")
	}
	return "Real traffic, reversed on purpose: a second fixture behind sonde tap --fault " + ReorderRule +
		" (docs/chaos.md). The server answers a, b, c; the tap hands them over last first.\n\n" + seen + "\n\n" +
		"Next: a call that times out. Press space."
}
