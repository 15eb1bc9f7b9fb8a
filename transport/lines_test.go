package transport

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"
)

type lineResult struct {
	line string
	err  error
}

func readAll(r *LineReader) []lineResult {
	var out []lineResult
	for i := 0; i < 1000; i++ {
		line, err := r.ReadLine()
		if errors.Is(err, io.EOF) {
			return out
		}
		out = append(out, lineResult{string(line), err})
	}
	panic("reader did not end")
}

func TestLineReader(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want []lineResult
	}{
		{"two lines", "a\nbb\n", 10, []lineResult{{"a", nil}, {"bb", nil}}},
		{"exactly max", "12345\n", 5, []lineResult{{"12345", nil}}},
		{"one over", "123456\nok\n", 5, []lineResult{{"", ErrLineTooLong}, {"ok", nil}}},
		{"crlf kept", "a\r\n", 5, []lineResult{{"a\r", nil}}},
		{"empty line", "\n\n", 5, []lineResult{{"", nil}, {"", nil}}},
		{"partial last", "a\nhalf", 10, []lineResult{{"a", nil}, {"half", io.ErrUnexpectedEOF}}},
		{"huge without newline", strings.Repeat("x", 100), 10, []lineResult{{"", ErrLineTooLong}}},
		{"long then short", strings.Repeat("y", 50) + "\nz\n", 10, []lineResult{{"", ErrLineTooLong}, {"z", nil}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, slow := range []bool{false, true} {
				var src io.Reader = strings.NewReader(tt.in)
				if slow {
					src = iotest.OneByteReader(src)
				}
				got := readAll(NewLineReader(src, tt.max))
				if len(got) != len(tt.want) {
					t.Fatalf("slow=%v: got %d lines %v, want %d", slow, len(got), got, len(tt.want))
				}
				for i := range got {
					if got[i].line != tt.want[i].line || !errors.Is(got[i].err, tt.want[i].err) && got[i].err != tt.want[i].err {
						t.Fatalf("slow=%v line %d: got %q %v, want %q %v", slow, i, got[i].line, got[i].err, tt.want[i].line, tt.want[i].err)
					}
				}
			}
		})
	}
}

func TestLineTooLongKeepsPrefix(t *testing.T) {
	r := NewLineReader(strings.NewReader(strings.Repeat("x", 2000)), 1000)
	_, err := r.ReadLine()
	var e *LineTooLongError
	if !errors.As(err, &e) || e.Limit != 1000 || len(e.Prefix) != prefixBytes {
		t.Fatalf("got %v (prefix %d bytes)", err, len(e.Prefix))
	}
}

// FuzzLineReader checks the framer's invariants on any input and any cap:
// no line exceeds the cap, and when no line was too long, the lines joined
// by newlines give back the input exactly.
func FuzzLineReader(f *testing.F) {
	f.Add([]byte("a\nb\n"), 4)
	f.Add([]byte("{\"x\":1}\r\n\n"), 3)
	f.Add([]byte("no newline at all"), 5)
	f.Fuzz(func(t *testing.T, in []byte, max int) {
		if max <= 0 || max > 1<<16 {
			max = 8
		}
		r := NewLineReader(bytes.NewReader(in), max)
		var rebuilt []byte
		tooLong := false
		for i := 0; i <= len(in)+1; i++ {
			line, err := r.ReadLine()
			if len(line) > max {
				t.Fatalf("line of %d bytes over cap %d", len(line), max)
			}
			switch {
			case err == nil:
				rebuilt = append(append(rebuilt, line...), '\n')
			case errors.Is(err, io.ErrUnexpectedEOF):
				rebuilt = append(rebuilt, line...)
			case errors.Is(err, ErrLineTooLong):
				tooLong = true
			case errors.Is(err, io.EOF):
				if !tooLong && !bytes.Equal(rebuilt, in) {
					t.Fatalf("rebuilt %q from %q", rebuilt, in)
				}
				return
			default:
				t.Fatalf("unexpected error %v", err)
			}
		}
		t.Fatal("reader did not reach EOF")
	})
}

func TestTail(t *testing.T) {
	tail := NewTail(8)
	tail.Write([]byte("abc"))
	if got, dropped := tail.Snapshot(); string(got) != "abc" || dropped != 0 {
		t.Fatalf("got %q %d", got, dropped)
	}
	tail.Write([]byte("defghij"))
	if got, dropped := tail.Snapshot(); string(got) != "cdefghij" || dropped != 2 {
		t.Fatalf("got %q %d", got, dropped)
	}
	tail.Write([]byte("0123456789ABC"))
	if got, dropped := tail.Snapshot(); string(got) != "56789ABC" || dropped != 15 {
		t.Fatalf("got %q %d", got, dropped)
	}
}

func TestTailCutsOnRuneBoundary(t *testing.T) {
	tail := NewTail(7)
	tail.Write([]byte("日本語日本語")) // 18 bytes, 3 per rune; 7 kept bytes start mid-rune
	got, dropped := tail.Snapshot()
	if !utf8.Valid(got) || string(got) != "本語" || dropped != 12 {
		t.Fatalf("got %q (valid=%v) dropped %d", got, utf8.Valid(got), dropped)
	}
	if int64(len(got))+dropped != 18 {
		t.Fatalf("kept %d + dropped %d, want 18 in all", len(got), dropped)
	}
}

func TestBuildEnv(t *testing.T) {
	environ := []string{"PATH=/bin", "HOME=/h", "SECRET=s", "LC_ALL=C", "AWS_KEY=k", "TERM=xterm"}
	got, err := BuildEnv(environ, []string{"AWS_KEY", "MISSING"}, []string{"FOO=bar", "HOME=/other"})
	if err != nil {
		t.Fatal(err)
	}
	want := "PATH=/bin HOME=/other LC_ALL=C AWS_KEY=k TERM=xterm FOO=bar"
	if strings.Join(got, " ") != want {
		t.Fatalf("got %q\nwant %q", strings.Join(got, " "), want)
	}
	if _, err := BuildEnv(nil, nil, []string{"NOEQUALS"}); err == nil {
		t.Fatal("--env without = accepted")
	}
	if _, err := BuildEnv(nil, []string{"A=B"}, nil); err == nil {
		t.Fatal("--pass-env with = accepted")
	}
}
