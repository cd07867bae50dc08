/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fault injection, for the tests only, driven by the environment:
 * VEGASCTL_CRASH_AT=POINT kills vegasctl at a named step of a multi-step
 * change (the crash-consistency tests), VEGASCTL_PAUSE_AT=POINT stops it there
 * (SIGSTOP) so that a test can run another command in that window and then
 * continue it (the race tests), VEGASCTL_FAIL_AT=POINT makes the step there
 * fail as if the kernel had refused it (the rollback tests; at `probe_program`,
 * as if a probe of ours were broken: `features`), and VEGASCTL_REFUSE=FEATURE makes it
 * act as if the kernel refused a feature, so fallbacks run on kernels that do
 * not need them (docs/DESIGN.md §4, §10).
 */
#ifndef VK_FAULT_H
#define VK_FAULT_H

#include <stdbool.h>

/* SIGKILL ourselves if VEGASCTL_CRASH_AT names this point. */
void vk_crash_point(const char *point);
/* SIGSTOP ourselves if VEGASCTL_PAUSE_AT names this point. */
void vk_pause_point(const char *point);
/* Whether VEGASCTL_FAIL_AT names this point: the step there fails (rollback tests). */
bool vk_fail_point(const char *point);
/* Whether VEGASCTL_REFUSE names this feature (a `vegasctl features` key). */
bool vk_refused(const char *feature);

#endif
