/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Debian's redis-server as the benchmarks' real service, on a Unix socket
 * in the guest's /run (its /tmp is the host's, read-only, when the
 * checkout is under /tmp: tests/vm/init): driven at saturation by
 * Debian's redis-benchmark, and at a fixed rate by an open-loop client
 * here (redis-benchmark has no rate limit).  The open-loop client sends
 * SET requests at their scheduled times whether or not earlier ones were
 * answered, and measures each latency from the scheduled time, so a
 * stalled server shows as latency rather than as fewer requests (no
 * coordinated omission).
 */
#ifndef TESTS_BENCH_REDIS_CLIENT_H
#define TESTS_BENCH_REDIS_CLIENT_H

#include "../kernel/idlebatch.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#define REDIS_SOCKET "/run/bench-redis.sock"

static inline int redis_connect(void)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	strcpy(addr.sun_path, REDIS_SOCKET);
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Start redis-server (nice 0, no persistence); its pid once it answers, or -1 */
static inline pid_t redis_server_start(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		/* Its start-up banner and warnings are not the benchmark's */
		if (null >= 0)
			dup2(null, 1);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execlp("redis-server", "redis-server", "--port", "0", "--unixsocket",
		       REDIS_SOCKET, "--save", "", "--appendonly", "no", "--loglevel",
		       "warning", (char *)NULL);
		fprintf(stderr, "redis: cannot run redis-server: %s (make deps installs it)\n",
			strerror(errno));
		_exit(127);
	}
	if (pid < 0)
		return -1;
	for (int i = 0; i < 600; i++) {
		int fd = redis_connect();

		if (fd >= 0) {
			close(fd);
			return pid;
		}
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return -1;
		usleep(50000);
	}
	fprintf(stderr, "redis: redis-server did not answer on %s in 30 s\n", REDIS_SOCKET);
	stop_task(pid);
	return -1;
}

struct redis_bench {
	double rps, p50_ms, p99_ms, p999_ms;
};

/*
 * redis-benchmark -t set with 8 clients for @requests requests.  Its
 * "Latency by percentile distribution" prints an HdrHistogram's values at
 * 50%, 75%, 87.5% ...; p99 and p99.9 are taken at the first printed
 * percentile at or above them (99.219% and 99.902%): upper bounds.
 */
static inline int redis_benchmark(long requests, struct redis_bench *r)
{
	char n[32], line[512];
	double secs = 0;
	int fds[2];
	pid_t pid;
	FILE *f;

	memset(r, 0, sizeof(*r));
	snprintf(n, sizeof(n), "%ld", requests);
	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		execlp("redis-benchmark", "redis-benchmark", "-s", REDIS_SOCKET, "-t", "set",
		       "-c", "8", "-n", n, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	while (f && fgets(line, sizeof(line), f)) {
		double pct, ms, s;

		if (sscanf(line, " %*d requests completed in %lf seconds", &s) == 1)
			secs = s;
		else if (sscanf(line, "%lf%% <= %lf milliseconds", &pct, &ms) == 2) {
			if (pct >= 50 && !r->p50_ms)
				r->p50_ms = ms;
			if (pct >= 99 && !r->p99_ms)
				r->p99_ms = ms;
			if (pct >= 99.9 && !r->p999_ms)
				r->p999_ms = ms;
		}
	}
	if (f)
		fclose(f);
	waitpid(pid, NULL, 0);
	if (secs <= 0 || !r->p50_ms) {
		fprintf(stderr, "redis: could not read redis-benchmark's report\n");
		return -1;
	}
	r->rps = requests / secs;
	return 0;
}

/*
 * SET requests at @rate per second for @seconds on one connection, open
 * loop.  Latencies in ms from each request's scheduled time into @lat_ms
 * (at most @cap, the count in *@n); the rate answered in *@achieved.
 */
static inline int redis_open_loop(double rate, double seconds, double *lat_ms, size_t cap,
				  size_t *n, double *achieved)
{
	static const char req[] = "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$3\r\nval\r\n";
	uint64_t period = (uint64_t)(1e9 / rate), t0, next, end;
	uint64_t *sent = calloc(cap, sizeof(*sent));
	size_t nsent = 0, nrecv = 0;
	int fd = redis_connect();
	char buf[4096];

	if (fd < 0 || !sent) {
		fprintf(stderr, "redis: cannot connect to %s\n", REDIS_SOCKET);
		free(sent);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	t0 = next = now_ns();
	end = t0 + (uint64_t)(seconds * 1e9);
	/* Send until the end, then wait up to a second for the last answers */
	while (nrecv < nsent || next < end) {
		uint64_t now = now_ns();
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int timeout_ms;

		if (now > end + 1000000000ull)
			break;
		while (next <= now && next < end && nsent < cap) {
			if (write(fd, req, sizeof(req) - 1) != sizeof(req) - 1)
				goto fail;
			sent[nsent++] = next;
			next += period;
		}
		timeout_ms = next < end ? (int)((next - now) / 1000000) : 10;
		if (poll(&pfd, 1, timeout_ms) > 0) {
			ssize_t got = read(fd, buf, sizeof(buf));

			if (got <= 0)
				goto fail;
			now = now_ns();
			for (ssize_t i = 0; i < got; i++)
				if (buf[i] == '\n' && nrecv < nsent)
					lat_ms[nrecv] = (now - sent[nrecv]) / 1e6, nrecv++;
		}
	}
	*achieved = nrecv / seconds;
	/* Requests never answered count with the time they waited so far */
	for (uint64_t now = now_ns(); nrecv < nsent; nrecv++)
		lat_ms[nrecv] = (now - sent[nrecv]) / 1e6;
	close(fd);
	free(sent);
	*n = nrecv;
	return 0;
fail:
	fprintf(stderr, "redis: the connection failed: %s\n", strerror(errno));
	close(fd);
	free(sent);
	return -1;
}

#endif
