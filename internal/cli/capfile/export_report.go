package capfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/report"
	"github.com/sonde-mcp/sonde/report/har"
)

// exportReport writes the HTML report (format html) or the HAR (format
// har) of the capture at path, to out ("" for stdout).
func exportReport(env *cmdutil.Env, path, format, out string) error {
	var rb *report.Builder
	var hb *har.Builder
	_, warnings, err := eachEvent(path, func(h capture.Header) {
		if format == "html" {
			rb = report.New(h, report.Options{File: filepath.Base(path), Sonde: cmdutil.Version})
		} else {
			hb = har.New(h, har.Options{Creator: "sonde", Version: cmdutil.Version})
		}
	}, func(ev client.Event) {
		if rb != nil {
			rb.Add(ev)
		} else {
			hb.Add(ev)
		}
	})
	if err != nil {
		return err
	}
	warnCapture(env, path, warnings)
	write := func(w io.Writer) error {
		if rb != nil {
			return report.Write(w, rb.Model())
		}
		return hb.Write(w)
	}
	if hb != nil {
		if err := hb.Check(); errors.Is(err, har.ErrStdio) {
			return &cmdutil.ExitStatus{Code: cmdutil.ExitUsage, Msg: "capture " + path + ": " + err.Error()}
		}
	}
	if out == "" {
		return write(env.Out)
	}
	return writeFile(env, out, write)
}

// writeFile writes a new file at path through write, or removes what it
// began when writing fails.
func writeFile(env *cmdutil.Env, path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return &cmdutil.ExitStatus{Code: cmdutil.ExitUsage, Msg: "-o " + path + ": " + err.Error()}
	}
	bw := bufio.NewWriter(f)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("-o %s: %w", path, err)
	}
	fmt.Fprintf(env.Err, "sonde: wrote %s\n", path)
	return nil
}
