package connect

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
)

// redactor builds the capture's redactor from the flags and the target:
// the values of --env entries (and a config entry's env) and of the
// variables passed with --pass-env, those of a config entry's headers and
// what its references brought in, and every --redact pattern. It also redacts every secret
// the run learns (learnt).
func redactor(f *Flags, t *Target, learnt *SecretSink) (*capture.Redactor, error) {
	secrets := append([]string(nil), t.Env...)
	secrets = append(secrets, t.Secrets...) // a config entry's (hostflags.go)
	for _, name := range f.PassEnv {
		if v, ok := os.LookupEnv(name); ok {
			secrets = append(secrets, name+"="+v)
		}
	}
	// HTTP: the values of --header and the bearer token.
	for _, kv := range f.Headers {
		if name, v, ok := strings.Cut(kv, ":"); ok {
			secrets = append(secrets, strings.TrimSpace(name)+"="+strings.TrimSpace(v))
		}
	}
	if f.BearerEnv != "" {
		secrets = append(secrets, f.BearerEnv+"="+strings.TrimSpace(os.Getenv(f.BearerEnv)))
	}
	r, err := capture.NewRedactor(secrets, f.Redact)
	if err != nil {
		return nil, cmdutil.Usagef(err.Error())
	}
	learnt.track(r)
	return r, nil
}

// SecretSink collects the secrets learnt while sonde runs (--oauth tokens)
// and hands each to every capture redactor, those made later included. The
// zero value is ready to use.
type SecretSink struct {
	mu   sync.Mutex
	vals []string
	reds []*capture.Redactor
}

// add records v and redacts it in every capture from now on.
func (s *SecretSink) add(v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.vals = append(s.vals, v)
	for _, r := range s.reds {
		r.AddSecret(v)
	}
}

// track makes r redact every secret, past and future.
func (s *SecretSink) track(r *capture.Redactor) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range s.vals {
		r.AddSecret(v)
	}
	s.reds = append(s.reds, r)
}

// captureOptions describe the server in a capture's header.
func captureOptions(t *Target, red *capture.Redactor) capture.Options {
	if t.URL != "" {
		return capture.Options{Sonde: cmdutil.Version, Transport: "http", URL: t.URL, Redact: red}
	}
	return capture.Options{Sonde: cmdutil.Version, Transport: "stdio", Command: t.Argv, Redact: red}
}

// startRecorder creates path (which must not exist) and writes the
// capture's header; the caller follows clients with it and closes it.
func startRecorder(f *Flags, t *Target, learnt *SecretSink) (*capture.Recorder, error) {
	path := f.Record
	red, err := redactor(f, t, learnt)
	if err != nil {
		return nil, err
	}
	file, err := capture.Create(path, false)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, cmdutil.Usagef("--record " + path + ": the file exists (captures are never overwritten: remove it or choose another name)")
		}
		return nil, cmdutil.Usagef("--record: " + err.Error())
	}
	rec, err := capture.NewRecorder(file, captureOptions(t, red))
	if err != nil {
		file.Close()
		return nil, err
	}
	return rec, nil
}

// RecordSwitch is the interactive UI's recorder: on from the start with
// --record, toggled by the R key to files in captureDir. Its captures redact
// the secrets learnt.
func RecordSwitch(f *Flags, t *Target, learnt *SecretSink) (*capture.Switch, error) {
	red, err := redactor(f, t, learnt)
	if err != nil {
		return nil, err
	}
	dir, err := captureDir()
	if err != nil {
		dir = "" // the R key then reports the error in the status bar
	}
	sw := capture.NewSwitch(captureOptions(t, red), dir)
	if f.Record != "" {
		if err := sw.Start(f.Record, nil); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return nil, cmdutil.Usagef("--record " + f.Record + ": the file exists (captures are never overwritten: remove it or choose another name)")
			}
			return nil, cmdutil.Usagef("--record: " + err.Error())
		}
	}
	return sw, nil
}

// captureDir is the folder of captures started with the R key (see
// capture.DefaultDir; a per-OS paths package will take this over).
func captureDir() (string, error) { return capture.DefaultDir() }

// ReportCapture says on w where the capture went, and what it lacks.
func ReportCapture(w io.Writer, path string, sum capture.Summary) {
	fmt.Fprintln(w, "sonde: "+capture.SummaryLine(path, sum))
}
