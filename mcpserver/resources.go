package mcpserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/sessions"
)

// The sonde:// resources: each session's capture (sonde://sessions/ID,
// listed), and each recording of the tap's sessions folder
// (sonde://tapped/ID, a template).
const (
	sessionScheme  = "sonde://sessions/"
	tappedScheme   = "sonde://tapped/"
	tappedTemplate = "sonde://tapped/{id}"
	// captureMIME is a capture's type: JSON lines (docs/capture-format.md).
	captureMIME = "application/jsonl"
	// maxResource bounds what one resources/read returns of a capture:
	// its header line and as many of its last whole lines as fit.
	maxResource = 1 << 20
	// watchPoll is how often the captures subscribed to are looked at
	// for growth.
	watchPoll = 250 * time.Millisecond
	// DefaultPageSize is the page of resources/list (and the other lists)
	// when Options.PageSize is 0.
	DefaultPageSize = 50
)

// resourceURI is the URI of the capture of this server's session id.
func resourceURI(id string) string { return sessionScheme + url.PathEscape(id) }

// tappedURI is the URI of the recording of tapped session id.
func tappedURI(id string) string { return tappedScheme + url.PathEscape(id) }

// resourceState is what the resources need of the server: where its
// sessions record, and the captures subscribed to with the size each had
// when last told. Safe for concurrent use.
type resourceState struct {
	mu    sync.Mutex
	dir   string            // the server's own captures (made on first use)
	paths map[string]string // session id → its capture
	subs  map[string]int64  // URI subscribed to → its size when last told
	stop  chan struct{}     // ends the watch (nil: not running)
	done  chan struct{}
}

func newResourceState() *resourceState {
	return &resourceState{paths: map[string]string{}, subs: map[string]int64{}}
}

// capturePath is where session id of this server records: a file of a
// folder of the server's own (mode 0700, removed when the server closes).
// The capture tools and resources find it by the session's id from then on.
func (s *Server) capturePath(id string) (string, error) {
	r := s.res
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dir == "" {
		d, err := os.MkdirTemp("", "sonde-mcp-")
		if err != nil {
			return "", fmt.Errorf("a folder for the session's capture: %w", err)
		}
		r.dir = d
	}
	p := filepath.Join(r.dir, id+".jsonl")
	r.paths[id] = p
	return p, nil
}

// recordTo is capturePath for session_start: "" (no capture) when the
// folder cannot be made.
func (s *Server) recordTo(id string) string {
	p, err := s.capturePath(id)
	if err != nil {
		return ""
	}
	return p
}

// setCapture records that session id's capture is at path ("": none).
func (s *Server) setCapture(id, path string) {
	s.res.mu.Lock()
	defer s.res.mu.Unlock()
	if path == "" {
		delete(s.res.paths, id)
		return
	}
	s.res.paths[id] = path
}

// ownCapture is the capture of this server's session id, if it has one
// (it stays after session_stop, until the server closes).
func (s *Server) ownCapture(id string) (string, bool) {
	if s.res == nil {
		return "", false
	}
	s.res.mu.Lock()
	defer s.res.mu.Unlock()
	p, ok := s.res.paths[id]
	return p, ok
}

// sessionAdded lists the capture of a session just put in the registry
// as a resource (resources/list_changed goes to the client).
func (s *Server) sessionAdded(sess *session) {
	if _, ok := s.ownCapture(sess.id); !ok {
		return
	}
	s.sdk.AddResource(&sdk.Resource{
		URI: resourceURI(sess.id), Name: sess.id, Title: "capture of " + sess.label, MIMEType: captureMIME,
		Description: "the capture of session " + sess.id + " (" + sess.label + "), growing while it runs: subscribe for notifications/resources/updated",
	}, s.readResource)
}

// registerResources registers the sonde:// capture resources: the
// template of the tap's recordings (each own session's capture is added
// by sessionAdded).
func (s *Server) registerResources() {
	s.res = newResourceState()
	s.sdk.AddResourceTemplate(&sdk.ResourceTemplate{
		URITemplate: tappedTemplate, Name: "tapped", Title: "a recording of sonde tap", MIMEType: captureMIME,
		Description: "the recording of a session sonde tap made for a real host, by its id (sessions_list lists them)",
	}, s.readResource)
}

// resourcePath is the capture file uri names, or a resource-not-found
// error.
func (s *Server) resourcePath(uri string) (string, error) {
	if id, ok := strings.CutPrefix(uri, sessionScheme); ok {
		if id, err := url.PathUnescape(id); err == nil {
			if p, ok := s.ownCapture(id); ok {
				return p, nil
			}
		}
	}
	if id, ok := strings.CutPrefix(uri, tappedScheme); ok {
		if id, err := url.PathUnescape(id); err == nil && id != "" && !strings.ContainsAny(id, `/\`) {
			if dir := (captureRefs{dir: s.opts.Host.SessionsDir}).sessionsDir(); dir != "" {
				if p, ok, err := sessions.Resolve(dir, id); err == nil && ok && filepath.Base(p) == id+sessions.Ext {
					return p, nil
				}
			}
		}
	}
	return "", sdk.ResourceNotFoundError(uri)
}

// readResource is resources/read of a capture.
func (s *Server) readResource(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	uri := req.Params.URI
	path, err := s.resourcePath(uri)
	if err != nil {
		return nil, err
	}
	text, err := captureText(path, maxResource)
	if errors.Is(err, os.ErrNotExist) {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %s", uri, textfmt.Escape(err.Error()))
	}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: captureMIME, Text: text}}}, nil
}

// captureText is the capture at path as a resource gives it: the whole
// file when it fits in max bytes, else its first line (the header) and as
// many of its last whole lines as fit; a line still being written is left
// out. It is sanitized as a terminal gets JSON (textfmt.KeepTerminal: the
// controls JSON leaves raw, DEL and C1, become \u00NN escapes), so it
// reads as the same JSON lines.
func captureText(path string, max int) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	var b []byte
	if st.Size() <= int64(max) {
		if b, err = io.ReadAll(io.LimitReader(f, int64(max))); err != nil {
			return "", err
		}
	} else if b, err = headAndTail(f, st.Size(), max); err != nil {
		return "", err
	}
	if i := strings.LastIndexByte(string(b), '\n'); i >= 0 {
		b = b[:i+1] // whole lines only
	} else {
		b = nil
	}
	return textfmt.Sanitize(string(b), textfmt.KeepTerminal), nil
}

// headAndTail is the first line of f and the whole lines of its last
// max bytes (less the first line's).
func headAndTail(f *os.File, size int64, max int) ([]byte, error) {
	head, err := bufio.NewReaderSize(f, 64<<10).ReadSlice('\n')
	if err != nil {
		return nil, fmt.Errorf("the capture's first line: %w", err)
	}
	head = append([]byte(nil), head...)
	room := int64(max - len(head))
	if room <= 0 {
		return head, nil
	}
	tail := make([]byte, room)
	n, err := f.ReadAt(tail, size-room)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	tail = tail[:n]
	if i := strings.IndexByte(string(tail), '\n'); i >= 0 {
		tail = tail[i+1:] // from the first whole line
	}
	return append(head, tail...), nil
}
