// SPDX-License-Identifier: GPL-2.0
/*
 * spin: a CPU-bound task that stays in user mode, for tests, benchmarks
 * and the demo.  Runs until killed, or for SECONDS if given.  With -b it
 * first makes itself SCHED_IDLEBATCH, as a program started from a shell
 * would after its exec.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SCHED_IDLEBATCH 8

int main(int argc, char **argv)
{
	volatile unsigned long counter = 0;
	struct sched_param sp = { 0 };
	struct timespec start, now;
	double seconds;

	if (argc > 1 && strcmp(argv[1], "-b") == 0) {
		if (sched_setscheduler(0, SCHED_IDLEBATCH, &sp)) {
			perror("spin: sched_setscheduler(SCHED_IDLEBATCH)");
			return 1;
		}
		argc--;
		argv++;
	}
	seconds = argc > 1 ? strtod(argv[1], NULL) : 0;
	if (argc > 2 || seconds < 0) {
		fprintf(stderr, "usage: spin [-b] [SECONDS]\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		for (int i = 0; i < 1000000; i++)
			counter++;
		if (seconds == 0)
			continue;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec + (now.tv_nsec - start.tv_nsec) / 1e9 >= seconds)
			return 0;
	}
}
