package tap

import (
	"os"
	"strconv"
	"strings"
)

// hostName is the name of the running process pid (the host that launched
// a tap), "" when it cannot be read.
func hostName(pid int) string {
	if pid <= 0 {
		return ""
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
