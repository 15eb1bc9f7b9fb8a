#!/usr/bin/env bash
# peak-rss.sh COMMAND [ARG...]: runs the command and prints its own peak
# resident set (VmHWM in /proc/PID/status, polled every 20 ms; Linux), not
# its children's: for `sonde call big` with `-- sonde fixture`, sonde alone
# (docs/performance.md, "Memory").
set -u
"$@" >/dev/null 2>"${PEAK_RSS_STDERR:-/dev/null}" &
pid=$!
peak=0
while kill -0 "$pid" 2>/dev/null; do
	v=$(awk '/^VmHWM/{print $2}' "/proc/$pid/status" 2>/dev/null)
	if [ -n "$v" ] && [ "$v" -gt "$peak" ]; then peak=$v; fi
	sleep 0.02
done
wait "$pid"
rc=$?
echo "exit $rc, peak $((peak / 1024)) MiB"
exit "$rc"
