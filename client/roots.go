package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"

	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
)

// DirRoot returns the root for directory dir: its absolute path as a
// file:// URI, named after its last element. dir must exist and be a
// directory.
func DirRoot(dir string) (mcp.Root, error) {
	if dir == "" {
		return mcp.Root{}, fmt.Errorf("root: empty directory name")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return mcp.Root{}, fmt.Errorf("root %s: %w", dir, err)
	}
	st, err := os.Stat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return mcp.Root{}, fmt.Errorf("root %s: no such directory", dir)
	}
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return mcp.Root{}, fmt.Errorf("root %s: %w", dir, pe.Err)
	}
	if err != nil {
		return mcp.Root{}, fmt.Errorf("root %s: %w", dir, err)
	}
	if !st.IsDir() {
		return mcp.Root{}, fmt.Errorf("root %s: not a directory", dir)
	}
	return mcp.Root{URI: fileURI(abs), Name: filepath.Base(abs)}, nil
}

// fileURI turns an absolute path into a file:// URI (with the Windows
// drive letter form, file:///C:/dir).
func fileURI(abs string) string {
	p := filepath.ToSlash(abs)
	if len(p) > 0 && p[0] != '/' {
		p = "/" + p
	}
	u := url.URL{Scheme: "file", Path: p}
	return u.String()
}

// Roots returns the roots sonde answers roots/list with.
func (c *Client) Roots() []mcp.Root {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]mcp.Root(nil), c.srv.roots...)
}

// SetRoots replaces the roots and, once the handshake is done, sends
// notifications/roots/list_changed (in the legacy era: the modern era has
// no such notification, so a note says the roots changed). It needs the roots capability
// (ServerRequests.Roots): without it the server was told sonde has no
// roots, and SetRoots is MCP_PROTOCOL.
func (c *Client) SetRoots(roots []mcp.Root) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.opts.ServerRequests.Roots {
		return newErr(CodeProtocol, "roots: sonde did not declare the roots capability (give --root)")
	}
	c.srv.roots = append([]mcp.Root(nil), roots...)
	if !c.initialized || c.closed || c.dead != nil {
		return nil
	}
	if c.era.modernLocked() {
		// The modern era has no roots/list_changed: the next input request
		// for roots/list is answered with the new roots.
		c.hub.emit(Event{Kind: EvNote, Note: "roots changed; the modern era has no notifications/roots/list_changed: the next roots/list input request gets them"})
		return nil
	}
	raw, _ := jsonrpc.EncodeNotification(mcp.MethodRootsChanged, nil)
	if !c.out.push(outItem{raw: raw, method: mcp.MethodRootsChanged}) {
		return newErr(CodeBusy, "%s: write queue full", mcp.MethodRootsChanged)
	}
	return nil
}

// rootsResultLocked is the answer to roots/list.
func (s *srvState) rootsResultLocked() json.RawMessage {
	c := s.c
	roots := c.srv.roots
	if roots == nil {
		roots = []mcp.Root{}
	}
	raw, _ := json.Marshal(mcp.ListRootsResult{Roots: roots})
	return raw
}
