//go:build !linux && !darwin && !windows

package transport

func statGroup(pid int) ([]ProcStat, error) { return nil, ErrStatUnsupported }

func groupMembers(pgid int) []ProcStat { return nil }
