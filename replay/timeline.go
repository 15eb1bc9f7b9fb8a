// Package replay opens a capture (docs/capture-format.md) for the replay
// UI: an event timeline over the file's index, with the checkpoints that
// make any position cheap to rebuild, and events read on demand.
//
// Open indexes the file (capture.OpenFunc) and, in the same pass, reads a
// few fields of request and frame records by byte search (a
// request's direction, id, method and state; a frame's id, direction, kind
// and verdict) and skips the rest. From that pass it keeps, per event,
// its index position, the time reached and a hash of its frame id, and,
// every CheckpointEvery events, a checkpoint: the events of the requests
// still alive there (in flight, or settled within the pending pane's linger
// time), which a rebuild applies before the events that follow the
// checkpoint. Nothing of the events themselves is kept: the UI asks for
// them (Read) when it needs them.
package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
)

const (
	// CheckpointEvery is the distance between two checkpoints, in events.
	CheckpointEvery = 1024
	// Warm is the least number of events a rebuild applies before the
	// cursor (when there are that many): the frames and stderr panes show
	// at least these, plus every request still alive at the cursor.
	Warm = 4096
	// DefaultLinger is how long the pending pane keeps a settled request in
	// its live view (pending.Options.Linger's default).
	DefaultLinger = 3 * time.Second
)

// Timeline is a capture opened for replay. Events are numbered from 0 in
// file order; a position k (0 to Len) means "events [0, k) have happened".
type Timeline struct {
	path string
	file *capture.File
	// ev[i] is the index position (Index.Entries) of event i.
	ev []int32
	// reached[i] is the largest T of events [0, i] (times are not always
	// increasing: a process exit is stamped when it was reaped).
	reached []int64
	// ids[i] is the hash of event i's frame id (0: not a frame, or no id).
	ids []uint64
	// problems are the events that are errors or protocol violations.
	problems []int32
	// tools are the tools/list response frames, with whether each page had
	// a next cursor (the next page continues it).
	tools []int32
	// sessions are the index positions of session records.
	sessions []int32
	cps      []checkpoint
}

// checkpoint is what a rebuild at or after event k = j*CheckpointEvery
// applies before events [k, …): the events (all before k) of the requests
// still alive at k, and the last process start.
type checkpoint struct {
	carry []int32
}

// Open opens and indexes the capture at path. A file that is missing or
// is not a capture is an error naming the file and the reason.
func Open(path string, linger time.Duration) (*Timeline, error) {
	tl := &Timeline{path: path}
	if st, err := os.Stat(path); err == nil {
		n := capture.SizeHint(st.Size())
		tl.ev, tl.reached, tl.ids = make([]int32, 0, n), make([]int64, 0, n), make([]uint64, 0, n)
	}
	s := newScanner(tl, linger)
	f, err := capture.OpenFunc(path, func(p int, e capture.Entry, line []byte) { s.entry(int32(p), e, line) })
	if err != nil {
		return nil, err
	}
	tl.file = f
	if len(tl.cps) == 0 {
		tl.cps = append(tl.cps, checkpoint{})
	}
	return tl, nil
}

// Close closes the file.
func (tl *Timeline) Close() error { return tl.file.Close() }

// Path returns the file's path.
func (tl *Timeline) Path() string { return tl.path }

// Header returns the capture's header.
func (tl *Timeline) Header() capture.Header { return tl.file.Index.Header }

// Len returns the number of events.
func (tl *Timeline) Len() int { return len(tl.ev) }

// Warnings says, briefly, what the capture lacks: a cut last line, bad
// lines, records of unknown types.
func (tl *Timeline) Warnings() []string {
	ix := tl.file.Index
	var w []string
	if ix.Truncated {
		w = append(w, "truncated capture")
	}
	if ix.Bad > 0 {
		w = append(w, fmt.Sprintf("%d bad lines", ix.Bad))
	}
	if ix.Skipped > 0 {
		w = append(w, fmt.Sprintf("%d unknown records", ix.Skipped))
	}
	return w
}

// Time returns the time reached at position k (ns since the header's
// start): the largest time of events [0, k), 0 at k = 0.
func (tl *Timeline) Time(k int) time.Duration {
	if k <= 0 || len(tl.reached) == 0 {
		return 0
	}
	return time.Duration(tl.reached[min(k, len(tl.reached))-1])
}

// End returns the time of the last event.
func (tl *Timeline) End() time.Duration { return tl.Time(tl.Len()) }

// At returns the position reached at offset d: every event with a time at
// or before d has happened.
func (tl *Timeline) At(d time.Duration) int {
	return sort.Search(len(tl.reached), func(i int) bool { return tl.reached[i] > int64(d) })
}

// NextProblem returns the first error or violation at or after event k,
// or -1.
func (tl *Timeline) NextProblem(k int) int {
	i, _ := slices.BinarySearch(tl.problems, int32(k))
	if i == len(tl.problems) {
		return -1
	}
	return int(tl.problems[i])
}

// PrevProblem returns the last error or violation before event k, or -1.
func (tl *Timeline) PrevProblem(k int) int {
	i, _ := slices.BinarySearch(tl.problems, int32(k))
	if i == 0 {
		return -1
	}
	return int(tl.problems[i-1])
}

// Problems returns how many events are errors or violations.
func (tl *Timeline) Problems() int { return len(tl.problems) }

// NextFrame returns the first frame at or after event k that carries id,
// or -1.
func (tl *Timeline) NextFrame(k int, id jsonrpc.ID) int {
	h := idHash(id)
	for i := max(k, 0); i < len(tl.ids); i++ {
		if tl.ids[i] == h {
			return i
		}
	}
	return -1
}

// Plan says how to rebuild the state at position k: apply the events carry,
// then the events [from, k). from is a checkpoint at least Warm events
// before k (or 0).
func (tl *Timeline) Plan(k int) (carry []int32, from int) {
	j := max(k-Warm, 0) / CheckpointEvery
	j = min(j, len(tl.cps)-1)
	if j < 0 {
		return nil, 0
	}
	return tl.cps[j].carry, j * CheckpointEvery
}

// ToolsAt returns how many tools/list responses came before position k:
// Tools(ToolsAt(k)) is the tool list at k.
func (tl *Timeline) ToolsAt(k int) int {
	i, _ := slices.BinarySearch(tl.tools, int32(k))
	return i
}

// SessionAt returns the index position of the last session record before
// position k, or -1.
func (tl *Timeline) SessionAt(k int) int {
	bound := int32(len(tl.file.Index.Entries))
	if k < len(tl.ev) {
		bound = tl.ev[k]
	}
	i, _ := slices.BinarySearch(tl.sessions, bound)
	if i == 0 {
		return -1
	}
	return int(tl.sessions[i-1])
}

// Session reads the session record at index position p (SessionAt).
func (tl *Timeline) Session(p int) (capture.Record, error) { return tl.file.Record(p) }

// Events reads the given events (ascending numbers) one by one. A record
// that cannot be read becomes a note saying why, so positions stay true.
func (tl *Timeline) Events(nums []int32) []client.Event {
	out := make([]client.Event, 0, len(nums))
	for _, n := range nums {
		ev, ok, err := tl.file.Event(int(tl.ev[n]))
		out = append(out, tl.orNote(n, ev, ok, err))
	}
	return out
}

// Read reads events [from, to) sequentially.
func (tl *Timeline) Read(from, to int) ([]client.Event, error) {
	to = min(to, len(tl.ev))
	if from >= to {
		return nil, nil
	}
	rd, err := tl.file.From(int(tl.ev[from]))
	if err != nil {
		return nil, err
	}
	entries := tl.file.Index.Entries
	out := make([]client.Event, 0, to-from)
	i := from
	for i < to {
		want := entries[tl.ev[i]].Offset
		rec, err := rd.Next()
		if err == io.EOF {
			break
		}
		var fe *capture.FormatError
		if errors.As(err, &fe) {
			if fe.Offset == want {
				out = append(out, tl.orNote(int32(i), client.Event{}, false, err))
				i++
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		if rec.Offset < want {
			continue // a record of the recorder's own
		}
		ev, ok, err := tl.file.Index.Header.Event(rec)
		out = append(out, tl.orNote(int32(i), ev, ok, err))
		i++
	}
	for ; i < to; i++ { // the file ended early (changed under us)
		out = append(out, tl.orNote(int32(i), client.Event{}, false, errors.New("record missing")))
	}
	return out, nil
}

// orNote returns ev, or a note event saying why event n could not be read.
func (tl *Timeline) orNote(n int32, ev client.Event, ok bool, err error) client.Event {
	if ok && err == nil {
		return ev
	}
	e := tl.file.Index.Entries[tl.ev[n]]
	why := "not an event"
	if err != nil {
		why = err.Error()
	}
	return client.Event{Seq: e.Seq, Time: tl.Header().Time(e.T), Kind: client.EvNote,
		Note: fmt.Sprintf("replay: capture line %d could not be read: %s", e.Line, why)}
}

// Tools reads the tool list made by the first n tools/list responses: the
// n-th, after the earlier pages it continues (a page with a nextCursor is
// continued by the next response). nil when n is 0.
func (tl *Timeline) Tools(n int) ([]mcp.Tool, error) {
	var pages [][]mcp.Tool
	for i := n - 1; i >= 0; i-- {
		res, err := tl.toolsPage(i)
		if err != nil {
			return nil, err
		}
		if i < n-1 && res.NextCursor == "" {
			break // an earlier, complete list
		}
		pages = append(pages, res.Tools)
	}
	var all []mcp.Tool
	for i := len(pages) - 1; i >= 0; i-- {
		all = append(all, pages[i]...)
	}
	return all, nil
}

func (tl *Timeline) toolsPage(i int) (mcp.ListToolsResult, error) {
	var res mcp.ListToolsResult
	ev := tl.Events(tl.tools[i : i+1])[0]
	if ev.Kind != client.EvFrame || ev.Frame == nil {
		return res, fmt.Errorf("tools/list response: %s", ev.Note)
	}
	if err := json.Unmarshal(ev.Frame.Msg.Result, &res); err != nil {
		return res, fmt.Errorf("tools/list response: %w", err)
	}
	return res, nil
}

// idHash is the key of an id in ids: its type and value (FNV-1a of "i"
// and the number, or "s" and the string; never 0 for an id).
func idHash(id jsonrpc.ID) uint64 {
	var buf [24]byte
	if n, ok := id.Int64(); ok {
		return fnvSum(fnvAdd(offset64, strconv.AppendInt(append(buf[:0], 'i'), n, 10)))
	}
	if s, ok := id.Str(); ok {
		return fnvSum(fnvAdd(fnvAdd(offset64, "s"), s))
	}
	return 0
}

// FNV-1a, 64 bits (hash/fnv's, without its allocation per hash).
const (
	offset64 uint64 = 14695981039346656037
	prime64  uint64 = 1099511628211
)

func fnvAdd[T string | []byte](h uint64, b T) uint64 {
	for i := 0; i < len(b); i++ {
		h = (h ^ uint64(b[i])) * prime64
	}
	return h
}

func fnvSum(h uint64) uint64 { return max(h, 1) }

// idHashRaw is idHash of an id as written in a record (3 or "3").
func idHashRaw(raw []byte) uint64 {
	if len(raw) > 1 && raw[0] == '"' && raw[len(raw)-1] == '"' && bytes.IndexByte(raw, '\\') < 0 {
		return idHash(jsonrpc.String(string(raw[1 : len(raw)-1]))) // no escapes to decode
	}
	var id jsonrpc.ID
	if id.UnmarshalJSON(raw) != nil {
		return 0
	}
	return idHash(id)
}
