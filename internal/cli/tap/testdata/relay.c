/* relay: starts argv[1..] with pipes for its stdin and stdout and copies
   bytes between them and its own, nothing else (one thread, poll). */
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static int copy(int from, int to) {
	static char buf[65536];
	ssize_t n = read(from, buf, sizeof buf);
	if (n <= 0) return -1;
	for (ssize_t o = 0; o < n;) {
		ssize_t w = write(to, buf + o, n - o);
		if (w < 0) return -1;
		o += w;
	}
	return 0;
}

int main(int argc, char **argv) {
	int in[2], out[2];
	if (argc < 2 || pipe(in) || pipe(out)) return 2;
	signal(SIGPIPE, SIG_IGN);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(in[0], 0); dup2(out[1], 1);
		close(in[0]); close(in[1]); close(out[0]); close(out[1]);
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	close(in[0]); close(out[1]);
	struct pollfd p[2] = {{0, POLLIN, 0}, {out[0], POLLIN, 0}};
	for (;;) {
		if (poll(p, 2, -1) < 0) continue;
		if (p[0].revents && p[0].fd >= 0 && copy(0, in[1])) { close(in[1]); p[0].fd = -1; }
		if (p[1].revents && copy(out[0], 1)) break;
	}
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
