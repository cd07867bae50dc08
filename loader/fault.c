// SPDX-License-Identifier: GPL-2.0
/* VEGASCTL_CRASH_AT, VEGASCTL_PAUSE_AT and VEGASCTL_REFUSE (fault.h). */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include "fault.h"

void vk_crash_point(const char *point)
{
	const char *at = getenv("VEGASCTL_CRASH_AT");

	if (at && !strcmp(at, point))
		raise(SIGKILL);
}

void vk_pause_point(const char *point)
{
	const char *at = getenv("VEGASCTL_PAUSE_AT");

	if (at && !strcmp(at, point))
		raise(SIGSTOP);
}

bool vk_refused(const char *feature)
{
	const char *r = getenv("VEGASCTL_REFUSE");

	return r && !strcmp(r, feature);
}

bool vk_fail_point(const char *point)
{
	const char *at = getenv("VEGASCTL_FAIL_AT");

	return at && !strcmp(at, point);
}
