package capture

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)

// encodeEvents writes a capture of evs (no client involved) and returns its
// bytes.
func encodeEvents(t testing.TB, red *Redactor, evs ...client.Event) []byte {
	t.Helper()
	var buf bytes.Buffer
	r, err := NewRecorder(&buf, Options{Sonde: "test", Command: []string{"srv"}, Redact: red, Start: t0})
	if err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	for _, ev := range evs {
		r.writeLocked(r.enc.record(ev))
		r.sum.Events++
	}
	r.mu.Unlock()
	if s := r.Close(); s.Err != nil {
		t.Fatal(s.Err)
	}
	return buf.Bytes()
}

func frameEvent(seq uint64, dir client.Direction, raw []byte, v client.Verdict) client.Event {
	f := client.NewInFrame(raw, t0.Add(time.Duration(seq)*time.Millisecond))
	f.Dir = dir
	return client.Event{Seq: seq, Time: f.Time, Kind: client.EvFrame, Frame: &client.FrameInfo{Frame: f, Verdict: v}}
}

func readEvents(t *testing.T, data []byte) (*Reader, []client.Event) {
	t.Helper()
	rd, recs := readRecords(t, bytes.NewReader(data))
	var evs []client.Event
	for _, rec := range recs {
		ev, ok, err := rd.Header().Event(rec)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			evs = append(evs, ev)
		}
	}
	return rd, evs
}

func TestNonUTF8FrameRoundTrips(t *testing.T) {
	raw := []byte("\xff\xfe not utf-8 \x00\x80 {\"id\":1}\r")
	stderr := []byte("log \xc3\x28 line\n")
	data := encodeEvents(t, nil,
		frameEvent(1, client.In, raw, client.VerdictMalformed),
		client.Event{Seq: 2, Time: t0, Kind: client.EvStderr, Stderr: stderr},
		frameEvent(3, client.In, []byte(`{"jsonrpc":"2.0","method":"x","params":{"s":"é✓"}}`), client.VerdictNotification),
	)
	if !bytes.Contains(data, []byte(`"b64":true`)) || !bytes.Contains(data, []byte(`é✓`)) {
		t.Fatalf("want base64 for invalid UTF-8 and text for valid UTF-8:\n%s", data)
	}
	_, evs := readEvents(t, data)
	if len(evs) != 3 || !bytes.Equal(evs[0].Frame.Raw, raw) || !bytes.Equal(evs[1].Stderr, stderr) {
		t.Fatalf("read back %q / %q", evs[0].Frame.Raw, evs[1].Stderr)
	}
	if evs[0].Frame.Err == nil || !errors.Is(evs[0].Frame.Err, jsonrpc.ErrDecode) {
		t.Errorf("decode error lost: %v", evs[0].Frame.Err)
	}
	if evs[2].Frame.Msg.Method != "x" || evs[2].Frame.Msg.Kind != jsonrpc.KindNotification {
		t.Errorf("message %+v", evs[2].Frame.Msg)
	}
}

func TestTooLongFrameKeepsItsError(t *testing.T) {
	f := client.Frame{Dir: client.In, Time: t0, Raw: []byte(`{"jsonrpc":"2.0","id":1,"result":"xxxx`), Err: &client.LineTooLongError{Limit: 1024, Prefix: []byte("x")}}
	data := encodeEvents(t, nil, client.Event{Seq: 1, Time: t0, Kind: client.EvFrame, Frame: &client.FrameInfo{Frame: f, Verdict: client.VerdictTooLong}})
	_, evs := readEvents(t, data)
	var tl *client.LineTooLongError
	if !errors.As(evs[0].Frame.Err, &tl) || tl.Limit != 1024 || !bytes.Equal(tl.Prefix, f.Raw) {
		t.Fatalf("too-long error read back as %#v", evs[0].Frame.Err)
	}
}

func TestTruncatedLastLine(t *testing.T) {
	data := encodeEvents(t, nil,
		frameEvent(1, client.Out, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), client.VerdictSent),
		frameEvent(2, client.In, []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), client.VerdictResolved),
	)
	// Drop the end record and cut the last frame in the middle, as a kill -9
	// mid-write would.
	lines := bytes.SplitAfter(data, []byte("\n"))
	cut := append(bytes.Join(lines[:2], nil), lines[2][:len(lines[2])/2]...)
	rd, evs := readEvents(t, cut)
	if len(evs) != 1 || evs[0].Seq != 1 {
		t.Fatalf("read %d events, want the first one", len(evs))
	}
	if !rd.Truncated() || len(rd.Warnings()) != 1 || !strings.Contains(rd.Warnings()[0], "line 3 is incomplete") {
		t.Fatalf("truncated %v, warnings %q", rd.Truncated(), rd.Warnings())
	}
	ix, err := BuildIndex(bytes.NewReader(cut))
	if err != nil || !ix.Truncated || len(ix.Entries) != 1 {
		t.Fatalf("index of a truncated file: %+v, %v", ix, err)
	}
}

// TestGoodSkipsBadRecords: Good passes a bad record over with a warning
// and goes on to the records after it.
func TestGoodSkipsBadRecords(t *testing.T) {
	data := encodeEvents(t, nil,
		frameEvent(1, client.Out, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), client.VerdictSent),
		frameEvent(2, client.In, []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), client.VerdictResolved),
	)
	lines := bytes.SplitAfter(data, []byte("\n"))
	bad := append(append(bytes.Join(lines[:2], nil), "{not a record\n"...), bytes.Join(lines[2:], nil)...)
	rd, err := NewReader(bytes.NewReader(bad))
	if err != nil {
		t.Fatal(err)
	}
	var warnings []string
	var seqs []uint64
	for rec, err := range rd.Good(&warnings) {
		if err != nil {
			t.Fatal(err)
		}
		if rec.Type == TypeFrame {
			seqs = append(seqs, rec.Seq)
		}
	}
	if len(seqs) != 2 || seqs[1] != 2 || len(warnings) != 1 || !strings.Contains(warnings[0], "line 3") {
		t.Fatalf("frames %v, warnings %q", seqs, warnings)
	}
}

func TestBadHeaders(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		want       error
		reason     string
	}{
		{"empty", "", ErrNotCapture, "empty"},
		{"not json", "hello\n", ErrNotCapture, "not a JSON header"},
		{"other json", `{"type":"frame","seq":1,"t":0}` + "\n", ErrNotCapture, "not a sonde-capture header"},
		{"bad version", `{"type":"header","format":"sonde-capture","version":"one","start":"2026-01-01T00:00:00Z"}` + "\n", ErrNotCapture, "bad version"},
		{"no start", `{"type":"header","format":"sonde-capture","version":"1.0"}` + "\n", ErrNotCapture, "no start"},
		{"cut header", `{"type":"header","format":"sonde-cap`, ErrNotCapture, "incomplete"},
		{"newer major", `{"type":"header","format":"sonde-capture","version":"2.0","start":"2026-01-01T00:00:00Z"}` + "\n", ErrNewerVersion, "upgrade sonde"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewReader(strings.NewReader(tc.data))
			var fe *FormatError
			if !errors.Is(err, tc.want) || !errors.As(err, &fe) || fe.Line != 1 || !strings.Contains(err.Error(), tc.reason) {
				t.Fatalf("error %v, want %v mentioning %q", err, tc.want, tc.reason)
			}
		})
	}
}

// TestCompatibility: an older or newer-minor capture is read; unknown
// fields are ignored and unknown record types skipped with a count; a bad
// line in the middle is an error that reading goes on past.
func TestCompatibility(t *testing.T) {
	data := `{"type":"header","format":"sonde-capture","version":"1.7","start":"2026-01-01T00:00:00Z","transport":"stdio","future":{"x":1}}
{"type":"frame","seq":1,"t":5,"dir":"out","id":1,"method":"ping","kind":"request","raw":"{}","verdict":"sent","hologram":true}
{"type":"telepathy","seq":2,"t":6}
this line is damaged
{"type":"note","seq":3,"t":7,"note":"still here"}
`
	rd, err := NewReader(strings.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if ma, mi := rd.Version(); ma != 1 || mi != 7 {
		t.Errorf("version %d.%d", ma, mi)
	}
	var types []string
	var bad []error
	for rec, err := range rd.All() {
		if err != nil {
			bad = append(bad, err)
			continue
		}
		types = append(types, rec.Type)
	}
	if strings.Join(types, ",") != "frame,note" {
		t.Errorf("records %v", types)
	}
	var fe *FormatError
	if len(bad) != 1 || !errors.Is(bad[0], ErrBadRecord) || !errors.As(bad[0], &fe) || fe.Line != 4 {
		t.Errorf("bad lines %v", bad)
	}
	if rd.Skipped()["telepathy"] != 1 || len(rd.Warnings()) != 1 {
		t.Errorf("skipped %v, warnings %v", rd.Skipped(), rd.Warnings())
	}
	ix, err := BuildIndex(strings.NewReader(data))
	if err != nil || len(ix.Entries) != 2 || ix.Bad != 1 || ix.Skipped != 1 {
		t.Errorf("index %+v %v", ix, err)
	}
}

func TestLongLines(t *testing.T) {
	big := bytes.Repeat([]byte("é"), 600<<10) // longer than the reader's buffer
	data := encodeEvents(t, nil, client.Event{Seq: 1, Time: t0, Kind: client.EvStderr, Stderr: big})
	_, evs := readEvents(t, data)
	if len(evs) != 1 || !bytes.Equal(evs[0].Stderr, big) {
		t.Fatalf("long stderr chunk not read back")
	}
	f := filepath.Join(t.TempDir(), "c.jsonl")
	if err := os.WriteFile(f, data, 0o600); err != nil {
		t.Fatal(err)
	}
	cf, err := Open(f)
	if err != nil {
		t.Fatal(err)
	}
	defer cf.Close()
	ev, ok, err := cf.Event(0)
	if err != nil || !ok || !bytes.Equal(ev.Stderr, big) {
		t.Fatalf("Event(0): %v %v", ok, err)
	}
}

func TestCreateIsPrivateAndRefusesToOverwrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.jsonl")
	f, err := Create(path, false)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
	if _, err := Create(path, false); !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("second create: %v", err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err = Create(path, true)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("overwritten file mode %v, want 0600", st.Mode().Perm())
	}
}

// TestRedactionInALiveSession: an --env value and a --redact match never
// reach the file, wherever they appear (frames both ways, argv, stderr).
func TestRedactionInALiveSession(t *testing.T) {
	const secret = "s3cr3t-Token-Value"
	l := startLive(t, liveOpts{env: []string{"API_KEY=" + secret}, redact: []string{`pids`, `ghp_[A-Za-z0-9]+`}})
	ctx := context.Background()
	if _, err := l.c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	args := json.RawMessage(`{"value":"key=` + secret + ` gh=ghp_abc123XYZ"}`)
	if _, _, err := l.c.CallTool(ctx, "echo", args, client.CallOptions{}); err != nil {
		t.Fatal(err)
	}
	// The fixture logs what it receives that it does not understand on
	// stderr: the secret goes there too.
	if _, err := l.c.Call(ctx, "tools/call", json.RawMessage(`{"name":"`+secret+`"}`), client.CallOptions{}); !errors.Is(err, client.ErrRemote) {
		t.Fatalf("unknown tool: %v", err)
	}
	evs, _ := l.finish()
	var wire bytes.Buffer
	for _, ev := range evs {
		if ev.Kind == client.EvFrame {
			wire.Write(ev.Frame.Raw)
		}
	}
	if !strings.Contains(wire.String(), secret) || !strings.Contains(wire.String(), "ghp_abc123XYZ") || !strings.Contains(strings.Join(l.argv, " "), "pids") {
		t.Fatal("the test's secrets were not on the wire: it proves nothing")
	}
	data, err := os.ReadFile(l.path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{secret, "ghp_abc123XYZ", "pids"} {
		if bytes.Contains(data, []byte(s)) {
			t.Errorf("%q reached the capture", s)
		}
	}
	rd, recs := readAll(t, l.path)
	if h := rd.Header(); strings.Join(h.Redaction, ",") != "env,regex" || !strings.Contains(strings.Join(h.Command, " "), Redacted) {
		t.Errorf("header %+v", h)
	}
	var flagged int
	for _, r := range recs {
		if r.Redacted {
			flagged++
			if !strings.Contains(r.Raw+r.Data+r.Detail+strings.Join(r.Argv, " ")+r.Note, Redacted) {
				t.Errorf("record flagged redacted without a marker: %+v", r)
			}
		}
		if r.Type == TypeFrame && strings.Contains(r.Raw, Redacted) && !r.Redacted {
			t.Errorf("redacted frame not flagged: %+v", r)
		}
	}
	if flagged < 3 {
		t.Errorf("%d records flagged as redacted, want the call, its answer and the process start at least", flagged)
	}
}

func TestRedactor(t *testing.T) {
	r, err := NewRedactor([]string{"SHORT=abc", `QUOTED=pa"ss\word`, "NOEQ"}, []string{`tok-\d+`})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ in, want string }{
		{`abc tok-12 tok-x`, `abc «redacted» tok-x`},
		{`{"p":"pa\"ss\\word"}`, `{"p":"«redacted»"}`},
		{`pa"ss\word`, `«redacted»`},
		{`nothing`, `nothing`},
	} {
		got, changed := r.String(tc.in)
		if got != tc.want || changed != (tc.in != tc.want) {
			t.Errorf("%q -> %q (%v), want %q", tc.in, got, changed, tc.want)
		}
	}
	if _, err := NewRedactor(nil, []string{"("}); err == nil || !strings.Contains(err.Error(), `--redact "("`) {
		t.Errorf("bad pattern: %v", err)
	}
	if _, err := NewRedactor(nil, []string{"x*"}); err == nil {
		t.Error("a pattern matching the empty string was accepted")
	}
	h, changed := r.HeaderLines([]string{"> Authorization: Bearer x", "< set-cookie: a=b", "> X-Trace: tok-7", "< Content-Type: text/event-stream", "Cookie: c=d"})
	if want := []string{"> Authorization: «redacted»", "< set-cookie: «redacted»", "> X-Trace: «redacted»", "< Content-Type: text/event-stream", "Cookie: «redacted»"}; !changed || !reflect.DeepEqual(h, want) {
		t.Errorf("header lines %q, want %q", h, want)
	}
	var nilR *Redactor
	if s, changed := nilR.String("x"); s != "x" || changed {
		t.Error("a nil redactor changed something")
	}
}

// TestMissedEventsAreRecorded: a recorder whose buffer overflows writes how
// many events it missed, and the client is never slowed.
func TestMissedEventsAreRecorded(t *testing.T) {
	// A writer stalled until the client is closed: every event after the
	// first one or two is missed.
	buf := &lockedBuffer{block: make(chan struct{})}
	l := startLive(t, liveOpts{faults: []string{"--fault", "notification-flood", "--flood-count", "200"}, out: buf, buffer: 1})
	if _, err := l.c.Initialize(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.c.CallTool(context.Background(), "echo", json.RawMessage(`{"value":"x"}`), client.CallOptions{}); err != nil {
		t.Fatal(err)
	}
	l.c.Close()
	close(buf.block)
	evs, sum := l.finish()
	if sum.Err != nil || sum.Missed == 0 || sum.Events+sum.Missed != uint64(len(evs)) {
		t.Fatalf("summary %+v for %d events", sum, len(evs))
	}
	rd, err := NewReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var missed, events uint64
	var end Record
	for r, err := range rd.All() {
		if err != nil {
			t.Fatal(err)
		}
		switch r.Type {
		case TypeMissed:
			missed += r.Count
		case TypeEnd:
			end = r
		default:
			if r.Seq != 0 {
				events++
			}
		}
	}
	if missed != sum.Missed || events != sum.Events || end.Missed != sum.Missed {
		t.Errorf("file says %d missed, %d events, end %+v; summary %+v", missed, events, end, sum)
	}
}

// lockedBuffer is a bytes.Buffer whose writes after the header wait until
// block is closed.
type lockedBuffer struct {
	bytes.Buffer
	block  chan struct{}
	writes int
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	if b.writes++; b.writes > 1 {
		<-b.block
	}
	return b.Buffer.Write(p)
}

func FuzzReader(f *testing.F) {
	f.Add(encodeEvents(f, nil,
		frameEvent(1, client.Out, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), client.VerdictSent),
		frameEvent(2, client.In, []byte("\xff noise"), client.VerdictMalformed),
		client.Event{Seq: 3, Time: t0, Kind: client.EvRequest, Req: &client.ReqInfo{Dir: client.Out, ID: jsonrpc.Int(1), Method: "ping", State: client.StateTimeout, Deadline: t0, Err: client.ErrTimeout}},
		client.Event{Seq: 4, Time: t0, Kind: client.EvProcess, Proc: &client.ProcInfo{What: client.ProcExit, Pid: 7, Exit: &client.Exit{Pid: 7, Code: 3, Stderr: []byte("bye\xff")}}},
	))
	f.Add([]byte(`{"type":"header","format":"sonde-capture","version":"1.0","start":"2026-01-01T00:00:00Z"}` + "\n" + `{"type":"frame","seq":1,"t":1,"raw":"!!","b64":true}`))
	f.Add([]byte(`{"type":"header","format":"sonde-capture","version":"9.0","start":"2026-01-01T00:00:00Z"}`))
	f.Add([]byte("{}\n{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rd, err := NewReader(bytes.NewReader(data))
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("untyped header error %v", err)
			}
			return
		}
		var offsets []int64
		for {
			rec, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				if !errors.Is(err, ErrBadRecord) {
					t.Fatalf("untyped record error %v", err)
				}
				continue
			}
			offsets = append(offsets, rec.Offset)
			_, _, _ = rd.Header().Event(rec)
		}
		ix, err := BuildIndex(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("index failed where the reader did not: %v", err)
		}
		// The index decodes only the start of each line: every record the
		// reader returns is indexed, and an indexed line is either a record
		// or ErrBadRecord when read.
		j := 0
		for _, e := range ix.Entries {
			rec, err := ReadRecordAt(bytes.NewReader(data), e.Offset)
			if err != nil {
				if !errors.Is(err, ErrBadRecord) {
					t.Fatalf("untyped error at %d: %v", e.Offset, err)
				}
				continue
			}
			if j < len(offsets) && offsets[j] == e.Offset && rec.Offset == e.Offset {
				j++
			}
		}
		if j != len(offsets) {
			t.Fatalf("the reader read %d records, %d of them indexed", len(offsets), j)
		}
	})
}

// TestRestartAndStopMidSession: a second client (a restart) is written
// after the first one's last event, behind a restart record; closing the
// recorder while the client runs stops recording without stopping it.
func TestRestartAndStopMidSession(t *testing.T) {
	l := startLive(t, liveOpts{})
	ctx := context.Background()
	if _, err := l.c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	// Restart as the UI does: stop and close the old client, start a new one.
	second := client.New(client.Options{})
	l.rec.Follow(second)
	l.c.StopServer()
	l.c.Close()
	if err := second.Connect(client.Stdio(l.cfg)); err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if _, err := second.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	sum := l.rec.Close()
	if sum.Err != nil {
		t.Fatal(sum.Err)
	}
	// The second client goes on without the recorder.
	if err := second.Ping(ctx); err != nil {
		t.Fatalf("ping after the recorder stopped: %v", err)
	}
	second.Close()
	_, recs := readAll(t, l.path)
	var types []string
	restarts, lastSeq := 0, uint64(0)
	for _, r := range recs {
		if r.Type == TypeRestart {
			restarts++
			lastSeq = 0
		}
		if r.Seq != 0 {
			if r.Seq <= lastSeq {
				t.Errorf("seq %d after %d", r.Seq, lastSeq)
			}
			lastSeq = r.Seq
		}
		if r.Type == TypeSession || r.Type == TypeRestart || r.Type == TypeEnd || (r.Type == TypeProcess && r.What != string(client.ProcSignal)) {
			types = append(types, r.Type+":"+r.What)
		}
	}
	if want := "session:,process:exit,restart:,process:start,session:,end:"; !strings.HasSuffix(strings.Join(types, ","), want) || restarts != 1 {
		t.Errorf("records %v, want ... %s", types, want)
	}
}

// TestHTTPEventRoundTrips: an HTTP exchange and a frame's stream and SSE
// event id come back as they were, with authorization values redacted.
func TestHTTPEventRoundTrips(t *testing.T) {
	he := &client.HTTPEvent{
		Method: "POST", URL: "http://127.0.0.1:9/mcp", Status: 200, Duration: 3 * time.Millisecond, Stream: "POST 7",
		Header: []string{"> Authorization: Bearer abc", "< Content-Type: text/event-stream"}, ReqID: jsonrpc.Int(7),
		EventID: "e-1", Raw: []byte("id: e-1\ndata:\n"), Note: "priming event",
	}
	fr := frameEvent(2, client.In, []byte(`{"jsonrpc":"2.0","id":7,"result":{}}`), client.VerdictResolved)
	fr.Frame.Stream, fr.Frame.EventID = "POST 7", "e-2"
	data := encodeEvents(t, nil, client.Event{Seq: 1, Time: t0, Kind: client.EvHTTP, HTTP: he}, fr)
	if bytes.Contains(data, []byte("Bearer abc")) {
		t.Fatal("an Authorization value reached the capture")
	}
	_, evs := readEvents(t, data)
	if len(evs) != 2 || evs[0].Kind != client.EvHTTP {
		t.Fatalf("read back %+v", evs)
	}
	want := *he
	want.Header = []string{"> Authorization: «redacted»", "< Content-Type: text/event-stream"}
	if got := *evs[0].HTTP; !reflect.DeepEqual(got, want) {
		t.Errorf("http event\n got %+v\nwant %+v", got, want)
	}
	if f := evs[1].Frame; f.Stream != "POST 7" || f.EventID != "e-2" {
		t.Errorf("frame stream %q event id %q", f.Stream, f.EventID)
	}
}
