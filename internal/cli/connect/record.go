package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"

	"github.com/sonde-mcp/sonde/capture"
)

// redactor builds the capture's redactor from the flags: the values of
// --env entries and of the variables passed with --pass-env, those of a
// config entry's headers and password inputs, and every --redact pattern.
func (f *serverFlags) redactor() (*capture.Redactor, error) {
	secrets := append([]string(nil), f.env...)
	secrets = append(secrets, f.secrets...) // a config entry's (hostflags.go)
	for _, name := range f.passEnv {
		if v, ok := os.LookupEnv(name); ok {
			secrets = append(secrets, name+"="+v)
		}
	}
	// HTTP: the values of --header and the bearer token.
	for _, kv := range f.headers {
		if name, v, ok := strings.Cut(kv, ":"); ok {
			secrets = append(secrets, strings.TrimSpace(name)+"="+strings.TrimSpace(v))
		}
	}
	if f.bearerEnv != "" {
		secrets = append(secrets, f.bearerEnv+"="+strings.TrimSpace(os.Getenv(f.bearerEnv)))
	}
	r, err := capture.NewRedactor(secrets, f.redact)
	if err != nil {
		return nil, usagef(err.Error())
	}
	f.oauthSecrets.track(r)
	return r, nil
}

// secretSink collects the secrets learnt while sonde runs (--oauth tokens)
// and hands each to every capture redactor, those made later included.
type secretSink struct {
	mu   sync.Mutex
	vals []string
	reds []*capture.Redactor
}

// add records v and redacts it in every capture from now on.
func (s *secretSink) add(v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.vals = append(s.vals, v)
	for _, r := range s.reds {
		r.AddSecret(v)
	}
}

// track makes r redact every secret, past and future.
func (s *secretSink) track(r *capture.Redactor) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range s.vals {
		r.AddSecret(v)
	}
	s.reds = append(s.reds, r)
}

// captureOptions describe the server in a capture's header.
func (f *serverFlags) captureOptions(argv []string, red *capture.Redactor) capture.Options {
	if f.url != "" {
		return capture.Options{Sonde: version, Transport: "http", URL: f.url, Redact: red}
	}
	return capture.Options{Sonde: version, Transport: "stdio", Command: argv, Redact: red}
}

// startRecorder creates path (which must not exist) and writes the
// capture's header; the caller follows clients with it and closes it.
func (f *serverFlags) startRecorder(path string, argv []string) (*capture.Recorder, error) {
	red, err := f.redactor()
	if err != nil {
		return nil, err
	}
	file, err := capture.Create(path, false)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, usagef("--record " + path + ": the file exists (captures are never overwritten: remove it or choose another name)")
		}
		return nil, usagef("--record: " + err.Error())
	}
	rec, err := capture.NewRecorder(file, f.captureOptions(argv, red))
	if err != nil {
		file.Close()
		return nil, err
	}
	return rec, nil
}

// recordSwitch is the interactive UI's recorder: on from the start with
// --record, toggled by the R key to files in captureDir.
func (f *tuiFlags) recordSwitch(argv []string) (*capture.Switch, error) {
	red, err := f.redactor()
	if err != nil {
		return nil, err
	}
	dir, err := captureDir()
	if err != nil {
		dir = "" // the R key then reports the error in the status bar
	}
	sw := capture.NewSwitch(f.captureOptions(argv, red), dir)
	if f.record != "" {
		if err := sw.Start(f.record, nil); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return nil, usagef("--record " + f.record + ": the file exists (captures are never overwritten: remove it or choose another name)")
			}
			return nil, usagef("--record: " + err.Error())
		}
	}
	return sw, nil
}

// captureDir is the folder of captures started with the R key (see
// capture.DefaultDir; a per-OS paths package will take this over).
func captureDir() (string, error) { return capture.DefaultDir() }

// reportCapture says on w where the capture went, and what it lacks.
func reportCapture(w io.Writer, path string, sum capture.Summary) {
	fmt.Fprintln(w, "sonde: "+capture.SummaryLine(path, sum))
}
