// SPDX-License-Identifier: GPL-2.0
/* The trace lease (tracelease.h). */
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "instance.h"
#include "tracelease.h"
#include "../bpf/vk_intf.h"

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);	/* bpf_ktime_get_ns's clock */
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

int vk_lease_open(void)
{
	return bpf_obj_get(VK_PIN_TRACE_UNTIL);
}

int vk_lease_renew(int fd)
{
	__u32 zero = 0;
	__u64 until = now_ns() + VK_TRACE_LEASE_NS;

	return fd < 0 ? -1 : bpf_map_update_elem(fd, &zero, &until, BPF_ANY);
}

bool vk_tracing_live(__u32 bits)
{
	__u32 zero = 0;
	__u64 until = 0;
	int fd;

	if (!bits)
		return false;
	fd = vk_lease_open();
	if (fd < 0)
		return false;
	if (bpf_map_lookup_elem(fd, &zero, &until))
		until = 0;
	close(fd);
	return until > now_ns();
}
