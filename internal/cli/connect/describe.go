package connect

import (
	"time"

	"github.com/sonde-mcp/sonde/client"
)

// DescribeEvent renders one event as --trace prints it: time since t0,
// arrow, id, method and what happened ("" for an event --trace leaves
// out). sonde watch prints a tapped session with it.
func DescribeEvent(ev client.Event, t0 time.Time) string { return describeEvent(ev, t0) }
