package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"time"

	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/cli/doctor"
	"github.com/sonde-mcp/sonde/internal/cli/tap"
	"github.com/sonde-mcp/sonde/mcpserver"
	"github.com/sonde-mcp/sonde/sessions"
)

// mcpDoctorTimeout and mcpDoctorJobs are sonde doctor's defaults (--timeout,
// --jobs), for sonde mcp's doctor tool.
const (
	mcpDoctorTimeout = 10 * time.Second
	mcpDoctorJobs    = 4
)

// mcpHost is what sonde mcp's host tools need of the command families
// (mcpserver may not import them): doctor's checklist, sonde sessions'
// listing and sonde inject, each the command's own code. Their results
// cross as the commands' JSON, read into mcpserver's types.
func mcpHost() mcpserver.HostFuncs {
	return mcpserver.HostFuncs{
		Doctor: func(ctx context.Context, server string) (*mcpserver.DoctorResult, error) {
			results, files, err := doctor.Results(ctx, server, mcpDoctorTimeout, mcpDoctorJobs)
			if err != nil {
				return nil, err
			}
			var out mcpserver.DoctorResult
			return &out, viaJSON(struct {
				Servers []doctor.Result      `json:"servers"`
				Files   []doctor.FileProblem `json:"files"`
			}{results, files}, &out)
		},
		Tapped: func(dir string) ([]mcpserver.TappedSession, error) {
			if dir == "" {
				d, err := sessions.Dir()
				if err != nil {
					return nil, err
				}
				dir = d
			}
			return sessions.ListTapped(dir)
		},
		Inject: func(ctx context.Context, path, method string, params json.RawMessage, timeout time.Duration) (json.RawMessage, error) {
			var out bytes.Buffer
			env := cmdutil.NewEnv(strings.NewReader(""), &out, io.Discard)
			o := &tap.InjectOptions{Session: path, Params: string(params), Timeout: timeout}
			if err := tap.RunInject(env, o, method); err != nil {
				return nil, err
			}
			return json.RawMessage(bytes.TrimSpace(out.Bytes())), nil
		},
	}
}

// viaJSON reads v's JSON into out: a command's output as mcpserver's
// types hold it.
func viaJSON(v, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}
