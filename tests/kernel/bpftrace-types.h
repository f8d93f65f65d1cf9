/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel types that tracepoint formats use, for bpftrace on the test
 * guest: its kernel is built without BTF (CONFIG_DEBUG_INFO_BTF), so
 * bpftrace cannot look them up.  Distribution kernels have BTF and need
 * no such file.
 */
typedef unsigned long long u64;
typedef int pid_t;
