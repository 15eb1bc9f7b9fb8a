/* relay [-spin MICROSECONDS] COMMAND [ARG...]: starts COMMAND with pipes
   for its stdin and stdout and copies bytes between them and its own,
   nothing else, in one thread. It sleeps in poll until either side has
   bytes; with -spin, it first keeps trying both (non-blocking reads) for
   that long after the last bytes it copied. BenchmarkTapFloor's bare
   relay. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* copy moves what one read gives from one fd to the other: 1 when it
   copied bytes, 0 when there were none yet, -1 at the end. */
static int copy(int from, int to) {
	static char buf[65536];
	ssize_t n = read(from, buf, sizeof buf);
	if (n == 0) return -1;
	if (n < 0) return errno == EAGAIN || errno == EINTR ? 0 : -1;
	for (ssize_t o = 0; o < n;) {
		ssize_t w = write(to, buf + o, n - o);
		if (w < 0 && errno != EAGAIN && errno != EINTR) return -1;
		if (w > 0) o += w;
	}
	return 1;
}

static long long now(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv) {
	long long spin = 0;
	if (argc > 2 && strcmp(argv[1], "-spin") == 0) {
		spin = atoll(argv[2]) * 1000;
		argv += 2;
		argc -= 2;
	}
	int in[2], out[2];
	if (argc < 2 || pipe(in) || pipe(out)) return 2;
	signal(SIGPIPE, SIG_IGN);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[0]); close(in[1]); close(out[0]); close(out[1]);
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	if (spin > 0) {
		fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);
		fcntl(out[0], F_SETFL, fcntl(out[0], F_GETFL) | O_NONBLOCK);
	}
	int inOpen = 1;
	long long last = now();
	for (;;) {
		if (spin > 0 && now() - last >= spin) {
			struct pollfd p[2] = {{inOpen ? 0 : -1, POLLIN, 0}, {out[0], POLLIN, 0}};
			poll(p, 2, -1);
		} else if (spin == 0) {
			struct pollfd p[2] = {{inOpen ? 0 : -1, POLLIN, 0}, {out[0], POLLIN, 0}};
			if (poll(p, 2, -1) < 0) continue;
			if (p[0].revents && copy(0, in[1]) < 0) { close(in[1]); inOpen = 0; }
			if (p[1].revents && copy(out[0], 1) < 0) break;
			continue;
		}
		int r, got = 0;
		if (inOpen) {
			r = copy(0, in[1]);
			if (r < 0) { close(in[1]); inOpen = 0; } else got |= r;
		}
		r = copy(out[0], 1);
		if (r < 0) break;
		if (got | r) last = now();
	}
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
