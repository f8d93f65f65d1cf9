// SPDX-License-Identifier: GPL-2.0
/*
 * An LD_PRELOAD shim that fails one read of a CPU-cache attribute in sysfs
 * with ENODEV, as the kernel fails it when the CPU goes offline between
 * the open and the read (its cache directory is gone): what stress-ng
 * 0.15.06's start-up meets beside a CPU hotplug storm, made certain
 * (tests/host/stress-cache-crash.t).
 *
 * SYSFS_ENODEV_PATH names the attribute (default cpu0's index0/type).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int doomed_fd = -1;

static int doomed(const char *path)
{
	const char *want = getenv("SYSFS_ENODEV_PATH");

	if (!want)
		want = "/sys/devices/system/cpu/cpu0/cache/index0/type";
	return !strcmp(path, want);
}

static int open_and_mark(const char *sym, const char *path, int flags, mode_t mode)
{
	int (*real)(const char *, int, ...) = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, sym);
	int fd = real(path, flags, mode);

	if (fd >= 0 && doomed(path))
		doomed_fd = fd;
	return fd;
}

int open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;

	va_start(ap, flags);
	if (flags & (O_CREAT | O_TMPFILE))
		mode = va_arg(ap, mode_t);
	va_end(ap);
	return open_and_mark("open", path, flags, mode);
}

int open64(const char *path, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;

	va_start(ap, flags);
	if (flags & (O_CREAT | O_TMPFILE))
		mode = va_arg(ap, mode_t);
	va_end(ap);
	return open_and_mark("open64", path, flags, mode);
}

ssize_t read(int fd, void *buf, size_t len)
{
	ssize_t (*real)(int, void *, size_t) = (ssize_t (*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");

	if (fd >= 0 && fd == doomed_fd) {
		doomed_fd = -1;
		errno = ENODEV;
		return -1;
	}
	return real(fd, buf, len);
}
