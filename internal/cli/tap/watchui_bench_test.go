package tap_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/sonde-mcp/sonde/internal/capturegen"
	"github.com/sonde-mcp/sonde/internal/cli/tap"
)

// BenchmarkWatchList is one read of the sessions folder by sonde watch's
// list (once a second while it is open), over 40 ended sessions of 20,000
// events each (about 4 MiB each): read whole each time (sonde sessions'
// way), and through the list's cache, which reads again only the files
// whose size or modification time changed.
func BenchmarkWatchList(b *testing.B) {
	dir := b.TempDir()
	for i := range 40 {
		path := filepath.Join(dir, fmt.Sprintf("s%02d-20261201-1000%02d-%d.jsonl", i, i, 1<<22+i))
		if err := capturegen.Write(path, capturegen.Options{Events: 20000}); err != nil {
			b.Fatal(err)
		}
	}
	for _, bc := range []struct {
		name  string
		cache map[string]tap.Tapped
	}{{"uncached", nil}, {"cached", map[string]tap.Tapped{}}} {
		b.Run(bc.name, func(b *testing.B) {
			if _, err := tap.ListSessionsCached(dir, bc.cache); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				list, err := tap.ListSessionsCached(dir, bc.cache)
				if err != nil || len(list) != 40 {
					b.Fatalf("%d sessions, %v", len(list), err)
				}
			}
		})
	}
}
