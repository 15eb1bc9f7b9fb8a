//go:build !linux && !darwin && !windows

package transport

func statGroup(pid int) ([]ProcStat, error) { return nil, ErrStatUnsupported }
