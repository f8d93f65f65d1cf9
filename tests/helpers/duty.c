// SPDX-License-Identifier: GPL-2.0
/*
 * duty: a normal task that keeps one CPU busy for BUSY_US and leaves it
 * idle for IDLE_US, over and over, until killed: a hog that leaves a known
 * share of idle time (9000 1000 leaves 10%).  With CPU, it is pinned there.
 * Usage: duty BUSY_US IDLE_US [CPU]
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static unsigned long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000ull + ts.tv_nsec / 1000;
}

static int parse(const char *s, long max, long *out)
{
	char *end;

	*out = strtol(s, &end, 10);
	return *s && !*end && *out >= 0 && *out <= max ? 0 : -1;
}

int main(int argc, char **argv)
{
	long busy, idle, cpu = -1;

	if (argc < 3 || argc > 4 || parse(argv[1], 10000000, &busy) ||
	    parse(argv[2], 10000000, &idle) || (argc == 4 && parse(argv[3], CPU_SETSIZE - 1, &cpu))) {
		fprintf(stderr, "usage: duty BUSY_US IDLE_US [CPU]\n");
		return 2;
	}
	if (cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			perror("duty: sched_setaffinity");
			return 1;
		}
	}
	for (;;) {
		unsigned long long end = now_us() + busy;

		while (now_us() < end)
			;
		if (idle)
			usleep(idle);
	}
}
