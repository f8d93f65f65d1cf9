// SPDX-License-Identifier: GPL-2.0
/*
 * with_policy: run a command under a scheduling policy given by number
 * (8 is SCHED_IDLEBATCH, which chrt does not know), for tests and the demo.
 * The user-facing tool is setbatch.
 *
 * Usage: with_policy POLICY CMD [ARGS...]
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sched_param sp = { 0 };
	char *end;
	long policy;

	if (argc < 3) {
		fprintf(stderr, "usage: with_policy POLICY CMD [ARGS...]\n");
		return 2;
	}
	errno = 0;
	policy = strtol(argv[1], &end, 10);
	if (errno || *end || policy < 0) {
		fprintf(stderr, "with_policy: bad policy number '%s'\n", argv[1]);
		return 2;
	}
	if (sched_setscheduler(0, (int)policy, &sp)) {
		fprintf(stderr, "with_policy: cannot set policy %ld: %s\n", policy, strerror(errno));
		return 1;
	}
	execvp(argv[2], argv + 2);
	fprintf(stderr, "with_policy: cannot run %s: %s\n", argv[2], strerror(errno));
	return 127;
}
