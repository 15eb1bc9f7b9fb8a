package capture

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
)

// DefaultBuffer is the subscription buffer of a Recorder: events the
// recorder may fall behind by before the client counts them as missed.
const DefaultBuffer = 1 << 16

// DefaultFlushAfter is how long a recorded event may wait in the
// recorder's buffer before it is handed to the operating system, unless
// Options.FlushAfter says otherwise: a crash or kill -9 of sonde loses at
// most the events of the last few milliseconds.
const DefaultFlushAfter = 2 * time.Millisecond

// Options describe the session in the header and how to record it.
type Options struct {
	// Sonde is sonde's version.
	Sonde string
	// Transport is "stdio" or "http".
	Transport string
	// Command is the server's argv (stdio); URL its endpoint (HTTP). Both
	// are redacted before they are written.
	Command []string
	URL     string
	// Redact replaces secrets everywhere (nil: nothing is redacted).
	Redact *Redactor
	// Buffer is the subscription's buffer (default DefaultBuffer).
	Buffer int
	// Start is offset 0 (default: now).
	Start time.Time
	// FlushAfter is how long written events may wait in the buffer (64
	// KiB) before they reach the file (default DefaultFlushAfter): one
	// write for the many events of a busy session rather than one each
	// time the recorder catches up with the client (sonde tap's recording,
	// whose writes compete with the forwarding for the CPU, waits longer).
	// Close flushes what is left.
	FlushAfter time.Duration
	// WriteBuffer is the size of that buffer (default 64 KiB; a
	// record longer than it is written on its own): sonde tap --listen,
	// with a recording per HTTP session and hundreds at once, gives each
	// a small one.
	WriteBuffer int
}

// Create creates the capture file path with mode 0600. An existing file is
// an error (fs.ErrExist) unless overwrite is set: a capture is evidence, and
// replacing one needs intent.
func Create(path string, overwrite bool) (*os.File, error) {
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if overwrite {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("capture %s already exists (choose another name, or remove it first): %w", path, err)
		}
		return nil, fmt.Errorf("capture: %w", err)
	}
	if overwrite {
		// O_TRUNC keeps an existing file's mode: make it private too.
		if err := f.Chmod(0o600); err != nil {
			f.Close()
			return nil, fmt.Errorf("capture: %w", err)
		}
	}
	return f, nil
}

// Summary is what a recorder wrote.
type Summary struct {
	// Events is the number of event records written.
	Events uint64
	// Missed is the number of events the recorder did not receive because it
	// fell behind (the client never waits for it).
	Missed uint64
	// Bytes is the size written, header included.
	Bytes int64
	// Err is the first write error (recording stopped there), if any.
	Err error
}

// Recorder writes a capture while the session runs. It follows one client
// at a time (Follow); each event is written into its buffer as it arrives,
// and the buffer reaches the file at most FlushAfter later (a few
// milliseconds by default), so a crash loses at most the events of that
// moment and those it had not yet received. Its methods are safe for
// concurrent use.
type Recorder struct {
	mu      sync.Mutex
	bw      *bufio.Writer
	closer  io.Closer
	enc     encoder
	rj      *recordJSON
	line    []byte     // a record's line (recordJSON)
	scratch recScratch // what the record being written points to
	opts    Options
	sum     Summary
	closed  bool
	follows sync.WaitGroup
	// last is closed when the newest follower has written its client's
	// last event; followed counts the clients followed.
	last     chan struct{}
	followed int
	subs     []*client.Subscription
}

// NewRecorder writes the header to w and returns a recorder. When w is an
// io.Closer, Close closes it.
func NewRecorder(w io.Writer, opts Options) (*Recorder, error) {
	if opts.Transport == "" {
		opts.Transport = "stdio"
	}
	if opts.Buffer <= 0 {
		opts.Buffer = DefaultBuffer
	}
	if opts.FlushAfter <= 0 {
		opts.FlushAfter = DefaultFlushAfter
	}
	if opts.Start.IsZero() {
		opts.Start = time.Now()
	}
	// Offsets are wall-clock differences, so that Start plus an offset is
	// exactly the event's time when read back.
	opts.Start = opts.Start.Round(0)
	if opts.WriteBuffer <= 0 {
		opts.WriteBuffer = 64 << 10
	}
	r := &Recorder{bw: bufio.NewWriterSize(w, opts.WriteBuffer), opts: opts}
	if c, ok := w.(io.Closer); ok {
		r.closer = c
	}
	r.enc = encoder{start: opts.Start, redact: opts.Redact}
	r.rj = newRecordJSON()
	argv, _ := opts.Redact.Strings(opts.Command)
	url, _ := opts.Redact.String(opts.URL)
	h := Header{
		Type: TypeHeader, Format: Format, Version: strconv.Itoa(VersionMajor) + "." + strconv.Itoa(VersionMinor),
		Sonde: opts.Sonde, Start: opts.Start, Transport: opts.Transport, Command: argv, URL: url,
		Redaction: opts.Redact.Kinds(),
	}
	if opts.Transport == "http" {
		h.Redaction = append(h.Redaction, "headers")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writeLocked(h)
	r.flushLocked()
	if r.sum.Err != nil {
		return nil, r.sum.Err
	}
	return r, nil
}

// writeLocked encodes v (the header) as one line into the buffered writer,
// through encoding/json (recordJSON.encode).
func (r *Recorder) writeLocked(v any) {
	if r.sum.Err != nil {
		return
	}
	line, err := r.rj.encode(v)
	if err != nil {
		r.sum.Err = fmt.Errorf("capture: encode: %w", err)
		return
	}
	r.putLocked(line)
}

// writeRecordLocked encodes rec as one line into the buffered writer.
func (r *Recorder) writeRecordLocked(rec *Record) { r.writeFrameLocked(rec, nil) }

// writeFrameLocked encodes rec as one line into the buffered writer, with
// raw (if not nil) as its Raw (encoder.recordBytes).
func (r *Recorder) writeFrameLocked(rec *Record, raw *bigRaw) {
	if r.sum.Err != nil {
		return
	}
	line, err := r.recordLineLocked(rec, raw)
	if err != nil {
		r.sum.Err = fmt.Errorf("capture: encode: %w", err)
		return
	}
	r.putLocked(line)
}

// recordLineLocked returns rec's line, newline included (recordJSON), with
// raw (if not nil) as its Raw; valid until the next call.
func (r *Recorder) recordLineLocked(rec *Record, raw *bigRaw) ([]byte, error) {
	var err error
	r.line, err = r.rj.append(r.line[:0], rec, raw)
	return r.line, err
}

func (r *Recorder) flushLocked() {
	if r.sum.Err != nil {
		return
	}
	if err := r.bw.Flush(); err != nil {
		r.sum.Err = fmt.Errorf("capture: write: %w", err)
	}
}

// Source is an event stream a Recorder can follow: a *client.Client, or a
// *client.Observer (a session seen by sonde tap); client.Source.
type Source = client.Source

// Follow subscribes to c and records its events until c is closed. Call it
// before c.Connect to record the whole session. Another client (a restart)
// may be followed after the first: its events are written after the first
// client's last one, behind a restart record, and its Seq starts again at 1.
// Follow after Close records nothing.
func (r *Recorder) Follow(c Source) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	sub := c.Subscribe(r.opts.Buffer)
	r.subs = append(r.subs, sub)
	prev, done := r.last, make(chan struct{})
	r.last = done
	r.followed++
	restart := r.followed > 1
	r.follows.Add(1)
	go func() {
		defer r.follows.Done()
		defer close(done)
		if prev != nil {
			<-prev
		}
		if restart {
			r.mu.Lock()
			r.writeRecordLocked(&Record{Type: TypeRestart, T: r.enc.off(time.Now())})
			r.mu.Unlock()
		}
		r.run(sub)
	}()
}

// run writes the events of one subscription.
func (r *Recorder) run(sub *client.Subscription) {
	var last, gaps uint64
	var initID jsonrpc.ID
	var flush <-chan time.Time // armed while written events wait (FlushAfter)
	timer := time.NewTimer(r.opts.FlushAfter)
	timer.Stop()
	defer timer.Stop()
	for {
		var ev client.Event
		var ok bool
		select {
		case ev, ok = <-sub.C:
		case <-flush:
			flush = nil
			r.mu.Lock()
			r.flushLocked()
			r.mu.Unlock()
			continue
		}
		if !ok {
			break
		}
		r.mu.Lock()
		// A gap before the first event is not a miss (the buffer was empty):
		// the recording started after those events.
		if last != 0 && ev.Seq > last+1 {
			n := ev.Seq - last - 1
			gaps += n
			r.sum.Missed += n
			r.writeRecordLocked(&Record{Type: TypeMissed, T: r.enc.off(ev.Time), Count: n, AfterSeq: last})
		}
		last = ev.Seq
		rec, raw := r.enc.recordBytes(ev, &r.scratch)
		if len(raw.b) >= streamMin {
			r.writeBigLocked(rec, &raw)
		} else {
			r.writeFrameLocked(&rec, &raw)
		}
		r.sum.Events++
		if s := sessionRecord(ev, &initID); s != nil {
			s.T = rec.T
			r.writeRecordLocked(s)
		}
		if flush == nil {
			timer.Reset(r.opts.FlushAfter)
			flush = timer.C
		}
		r.mu.Unlock()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	// Events missed after the last one received show in no gap.
	if m := sub.Missed(); m > gaps {
		r.sum.Missed += m - gaps
		r.writeRecordLocked(&Record{Type: TypeMissed, T: r.enc.off(time.Now()), Count: m - gaps, AfterSeq: last})
	}
	r.flushLocked()
}

// sessionRecord returns the session record when ev is the response that
// settled initialize. initID tracks initialize's id.
func sessionRecord(ev client.Event, initID *jsonrpc.ID) *Record {
	switch {
	case ev.Kind == client.EvRequest && ev.Req.Method == mcp.MethodInitialize && ev.Req.State == client.StateQueued:
		*initID = ev.Req.ID
	case ev.Kind == client.EvFrame && ev.Frame.Verdict == client.VerdictResolved && initID.IsValid() && ev.Frame.Msg.ID == *initID:
		var res mcp.InitializeResult
		if json.Unmarshal(ev.Frame.Msg.Result, &res) != nil {
			return nil
		}
		return &Record{Type: TypeSession, ProtocolVersion: res.ProtocolVersion, ServerName: res.ServerInfo.Name, ServerVersion: res.ServerInfo.Version}
	}
	return nil
}

// Summary returns what has been written so far.
func (r *Recorder) Summary() Summary {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sum
}

// Wait blocks until every followed client has been closed and its events
// written.
func (r *Recorder) Wait() { r.follows.Wait() }

// Close stops following (close the clients first to record their last
// events; a client left open goes on without the recorder), writes what is
// buffered and the end record, flushes, and closes the file. It returns the
// summary; Summary.Err is the first write error. It is idempotent.
func (r *Recorder) Close() Summary {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		r.follows.Wait()
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.sum
	}
	r.closed = true
	subs := r.subs
	r.mu.Unlock()
	// Stop following: what is already buffered is still written.
	for _, s := range subs {
		s.Close()
	}
	r.follows.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writeRecordLocked(&Record{Type: TypeEnd, T: r.enc.off(time.Now()), Events: r.sum.Events, Missed: r.sum.Missed})
	r.flushLocked()
	if r.closer != nil {
		if err := r.closer.Close(); err != nil && r.sum.Err == nil {
			r.sum.Err = fmt.Errorf("capture: close: %w", err)
		}
	}
	return r.sum
}

// DefaultDir is the folder of captures started from the interactive UI:
// $XDG_DATA_HOME/sonde/captures, else ~/.local/share/sonde/captures.
func DefaultDir() (string, error) {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "sonde", "captures"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("capture folder: %w", err)
	}
	return filepath.Join(home, ".local", "share", "sonde", "captures"), nil
}

// FileName is the name of a capture started at t: sonde-20060102-150405.jsonl
// in UTC.
func FileName(t time.Time) string {
	return "sonde-" + t.UTC().Format("20060102-150405") + ".jsonl"
}
