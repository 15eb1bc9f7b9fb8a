package capture

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// FuzzJSONStringBody: the streamed escaping of valid UTF-8 is byte for
// byte what encoding/json writes inside the string, and base64 what
// EncodeToString gives.
func FuzzJSONStringBody(f *testing.F) {
	for _, s := range []string{"", "plain", "a\"b\\c\n\r\t\b\f\x00\x1f\x7f", "<&>", "\u2028\u2029\u2027\u202a", "日本語 🚀", "\xff\xfe"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var out bytes.Buffer
		w := bufio.NewWriterSize(&out, 16)
		if utf8.Valid(b) {
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(string(b)); err != nil {
				t.Fatal(err)
			}
			n, err := writeJSONStringBody(w, b)
			if err != nil || w.Flush() != nil {
				t.Fatal(err)
			}
			if wantBody := want.Bytes()[1 : want.Len()-2]; !bytes.Equal(out.Bytes(), wantBody) || n != int64(out.Len()) {
				t.Fatalf("escaped %q as %q (%d counted), want %q", b, out.Bytes(), n, wantBody)
			}
			out.Reset()
		}
		n, err := writeBase64(w, b)
		if err != nil || w.Flush() != nil {
			t.Fatal(err)
		}
		if want := base64.StdEncoding.EncodeToString(b); out.String() != want || n != int64(len(want)) {
			t.Fatalf("base64 %q, want %q", out.String(), want)
		}
	})
}

// TestBigFrameRecordSameBytes: a frame written in pieces (at least
// streamMin bytes) makes the same line as the record encoded whole, for
// text that needs escapes, for bytes that are not UTF-8 (base64) and with
// redaction; the summary counts the same bytes.
func TestBigFrameRecordSameBytes(t *testing.T) {
	body := strings.Repeat("ab\"c\\\n\t\x01 é \u2028 日本 <&> secret-token ", streamMin/30+1)
	red, err := NewRedactor(nil, []string{"secret-token"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		raw  []byte
		red  *Redactor
	}{
		{"escapes", []byte(`{"jsonrpc":"2.0","id":1,"result":"` + body + `"}`), nil},
		{"not utf-8", append([]byte(body), 0xff, 0xfe), nil},
		{"redacted", []byte(body), red},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.raw) < streamMin {
				t.Fatalf("%d bytes", len(tc.raw))
			}
			msg, derr := jsonrpc.Decode(tc.raw)
			ev := client.Event{Seq: 3, Time: time.Unix(5, 0), Kind: client.EvFrame, Frame: &client.FrameInfo{
				Frame:   client.Frame{Dir: client.In, Time: time.Unix(5, 0), Raw: tc.raw, Msg: msg, Err: derr},
				Verdict: client.VerdictResolved, Detail: `detail with "raw":"\u0000sonde-raw\u0000" in it`,
			}}
			write := func(big bool) ([]byte, Summary) {
				var out bytes.Buffer
				r, err := NewRecorder(&out, Options{Start: time.Unix(1, 0), Redact: tc.red})
				if err != nil {
					t.Fatal(err)
				}
				r.mu.Lock()
				if rec, raw := r.enc.recordBytes(ev, new(recScratch)); big && len(raw.b) >= streamMin {
					r.writeBigLocked(rec, &raw)
				} else {
					r.writeLocked(r.enc.record(ev))
				}
				r.flushLocked()
				sum := r.sum
				r.mu.Unlock()
				return out.Bytes(), sum
			}
			want, wsum := write(false)
			got, gsum := write(true)
			if !bytes.Equal(got, want) || gsum != wsum {
				t.Fatalf("streamed record differs (%d vs %d bytes, summary %+v vs %+v)", len(got), len(want), gsum, wsum)
			}
		})
	}
}

// TestRecorderFlushAfter: with FlushAfter, an event waits in the buffer
// (here: still absent 400 ms after it was recorded, FlushAfter being 2 s)
// and then reaches the file without another event coming; Close writes
// what waits at once.
func TestRecorderFlushAfter(t *testing.T) {
	t.Run("timer", func(t *testing.T) {
		path, obs, r := noteRecorder(t, Options{FlushAfter: 2 * time.Second})
		start := time.Now()
		obs.Note("first", start)
		time.Sleep(400 * time.Millisecond)
		if strings.Contains(written(t, path), "first") {
			t.Fatalf("written after %v, before FlushAfter", time.Since(start))
		}
		waitWritten(t, path, "first")
		obs.Close()
		r.Close()
	})
	t.Run("close", func(t *testing.T) {
		path, obs, r := noteRecorder(t, Options{FlushAfter: time.Hour})
		obs.Note("last", time.Now())
		obs.Close()
		r.Close()
		if s := written(t, path); !strings.Contains(s, "last") || !strings.Contains(s, `"type":"end"`) {
			t.Fatalf("after Close:\n%s", s)
		}
	})
}

// TestRecorderFlushesByDefault: without FlushAfter, an event reaches the
// file on its own (DefaultFlushAfter), while the session goes on and
// nothing else is recorded.
func TestRecorderFlushesByDefault(t *testing.T) {
	path, obs, r := noteRecorder(t, Options{})
	obs.Note("only", time.Now())
	waitWritten(t, path, "only")
	obs.Close()
	r.Close()
}

// noteRecorder returns a new capture file's path and a recorder with opts
// writing it, following an observer (whose notes are events).
func noteRecorder(t *testing.T, opts Options) (string, *client.Observer, *Recorder) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.jsonl")
	w, err := Create(path, false)
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRecorder(w, opts)
	if err != nil {
		t.Fatal(err)
	}
	obs := client.NewObserver(0)
	r.Follow(obs)
	return path, obs, r
}

// waitWritten waits until the file at path holds text (20 s at most).
func waitWritten(t *testing.T, path, text string) {
	t.Helper()
	start := time.Now()
	for !strings.Contains(written(t, path), text) {
		if time.Since(start) > 20*time.Second {
			t.Fatalf("%q never written", text)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// written is the file at path as it is now.
func written(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
