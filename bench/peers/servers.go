package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sonde-mcp/sonde/fixtures"
)

// The servers every client is run against, each a subprocess: this binary
// re-executed as `peers serve NAME`.
var serverNames = []string{"fixture", "gosdk", "minimal"}

// serve runs server name on stdin/stdout and returns the exit code.
func serve(name string) int {
	switch name {
	case "fixture":
		return fixtures.Main(nil, os.Stdin, os.Stdout, os.Stderr)
	case "gosdk":
		return serveGoSDK()
	case "minimal":
		if err := serveMinimal(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "minimal:", err)
			return 1
		}
		return 0
	}
	fmt.Fprintf(os.Stderr, "unknown server %q\n", name)
	return 2
}

// echoIn is the echo tool's input.
type echoIn struct {
	Value string `json:"value" jsonschema:"the text to return"`
}

// serveGoSDK is an echo server written with the official Go SDK, the way its
// documentation writes one.
func serveGoSDK() int {
	s := mcp.NewServer(&mcp.Implementation{Name: "gosdk-echo", Version: "v1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Returns value."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Value}}}, nil, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "gosdk:", err)
		return 1
	}
	return 0
}

// The minimal server's answers, all but the id precomputed.
const (
	minimalInit  = `,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"minimal-echo","version":"0"}}}` + "\n"
	minimalList  = `,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object","properties":{"value":{"type":"string"}}}}]}}` + "\n"
	minimalEcho  = `,"result":{"content":[{"type":"text","text":"hello"}]}}` + "\n"
	minimalEmpty = `,"result":{}}` + "\n"
)

// serveMinimal answers from precomputed bytes: it finds a request's id and
// method by byte search, decodes nothing, answers every tools/call with the
// same echo of "hello", and writes its answers in one write per batch of
// input (flushed when no more input is buffered). It is the server whose own
// cost is the least, so that a client's cost dominates.
func serveMinimal(in io.Reader, out io.Writer) error {
	r := bufio.NewReaderSize(in, 64<<10)
	w := bufio.NewWriterSize(out, 64<<10)
	for {
		line, err := r.ReadSlice('\n')
		if len(line) > 0 {
			if id, ok := member(line, `"id":`); ok {
				method, _ := member(line, `"method":`)
				w.WriteString(`{"jsonrpc":"2.0","id":`)
				w.Write(id)
				switch string(method) {
				case `"initialize"`:
					w.WriteString(minimalInit)
				case `"tools/list"`:
					w.WriteString(minimalList)
				case `"tools/call"`:
					w.WriteString(minimalEcho)
				default:
					w.WriteString(minimalEmpty)
				}
			}
		}
		if err == io.EOF {
			return w.Flush()
		}
		if err != nil && err != bufio.ErrBufferFull {
			return err
		}
		if r.Buffered() == 0 {
			if err := w.Flush(); err != nil {
				return err
			}
		}
	}
}

// member returns the raw value (a number or a string without escapes) after
// key in line, found by byte search: enough for the lines the benchmark's
// clients send, whose ids and methods come before params.
func member(line []byte, key string) ([]byte, bool) {
	i := bytes.Index(line, []byte(key))
	if i < 0 {
		return nil, false
	}
	v := bytes.TrimLeft(line[i+len(key):], " ")
	if len(v) > 0 && v[0] == '"' {
		end := bytes.IndexByte(v[1:], '"')
		if end < 0 {
			return nil, false
		}
		return v[:end+2], true
	}
	end := 0
	for end < len(v) && (v[end] == '-' || v[end] >= '0' && v[end] <= '9') {
		end++
	}
	return v[:end], end > 0
}

// idNumber parses an integer id found by member.
func idNumber(raw []byte) (int, bool) {
	n, err := strconv.Atoi(string(raw))
	return n, err == nil
}
