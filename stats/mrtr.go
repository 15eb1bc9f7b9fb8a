package stats

import (
	"fmt"
	"strings"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/textfmt"
)

// MRTR chains (2026-07-28 multi-round-trip requests): a request answered
// input_required (outcome StateRetried) is retried under a new id
// (ReqInfo.RetryOf) once the client, often its user, has the answers. A
// chain's server time is the sum of its rounds' latencies; its waiting
// time is the sum of the gaps between a round's input_required answer and
// the next round's start: time spent on the client's side.

// maxChains bounds the chains a Collector follows at once and reports.
const maxChains = 1024

// Chain is one MRTR chain that ended.
type Chain struct {
	Method string `json:"method"`
	Tool   string `json:"tool,omitempty"`
	// Rounds is the number of requests in the chain (2 or more).
	Rounds int `json:"rounds"`
	// Server is the time the server took over all rounds; Waiting the
	// time between an input_required answer and the next round.
	Server  time.Duration `json:"server"`
	Waiting time.Duration `json:"waiting"`
	// Outcome is the last round's (resolved, error, timeout…).
	Outcome string `json:"outcome"`
}

// openChain is a chain whose last round was answered input_required.
type openChain struct {
	Chain
	answered time.Time // when the last round was answered input_required
}

// chain folds one request transition of sonde's into the MRTR chains.
// lat is the round's latency as the method table counts it (held time off).
func (c *Collector) chain(t time.Time, q *client.ReqInfo, lat time.Duration) {
	if q.Dir != client.Out || !q.ID.IsValid() {
		return
	}
	k := reqKey{c.gen, q.ID}
	switch {
	case q.State == client.StateQueued && q.RetryOf.IsValid():
		prev := reqKey{c.gen, q.RetryOf}
		ch, ok := c.chains[prev]
		if !ok {
			return
		}
		delete(c.chains, prev)
		ch.Waiting += max(0, t.Sub(ch.answered))
		c.chains[k] = ch
	case q.State == client.StateRetried:
		ch, ok := c.chains[k]
		if !ok {
			if len(c.chains) >= maxChains {
				return
			}
			ch = &openChain{Chain: Chain{Method: q.Method, Tool: q.Tool}}
		}
		delete(c.chains, k)
		ch.Rounds++
		ch.Server += lat
		ch.answered = t
		c.chains[k] = ch
	case q.State.Final():
		ch, ok := c.chains[k]
		if !ok {
			return
		}
		delete(c.chains, k)
		ch.Rounds++
		ch.Server += lat
		ch.Outcome = string(q.State)
		if len(c.ended) < maxChains {
			c.ended = append(c.ended, ch.Chain)
		}
	}
}

// maxChainLines bounds the chains the text report lists.
const maxChainLines = 10

// writeChains lists the MRTR chains: server time apart from waiting.
func writeChains(b *strings.Builder, chains []Chain) {
	if len(chains) == 0 {
		return
	}
	fmt.Fprintf(b, "\nMRTR chains (input_required, then retries): %d\n", len(chains))
	for i, ch := range chains {
		if i == maxChainLines {
			fmt.Fprintf(b, "  … %d more (--json lists them all)\n", len(chains)-i)
			break
		}
		name := ch.Method
		if ch.Tool != "" {
			name += " " + ch.Tool
		}
		fmt.Fprintf(b, "  %s: %d rounds, %s; server worked %s while the client and its user took %s\n",
			name, ch.Rounds, ch.Outcome, textfmt.Dur(ch.Server), textfmt.Dur(ch.Waiting))
	}
}
