// SPDX-License-Identifier: GPL-2.0
/* An instance with its state, as list, show and load --json print it (listing.h). */
#include <stdio.h>
#include <string.h>
#include "format.h"
#include "instance.h"
#include "listing.h"
#include "params.h"
#include "tracelease.h"
#include "variants.h"

static const char *instance_state(const struct vk_instance *in)
{
	if (!in->committed)
		return "incomplete";	/* interrupted load or unload: `unload` removes it */
	if (!in->registered)
		return "stale";		/* pinned link, but the kernel lost it */
	if (in->other_version)
		return "other-version";	/* loaded by a vegasctl of another params layout */
	if (!in->has_params || in->params.ops_map_id != in->map_id)
		return "inconsistent";	/* params do not belong to the live controller */
	return "registered";
}

/* "off", "decisions", "acks", "cost" or those joined by "+", or "off (reader gone)" when bits are set
 * but no live reader wants them or holds the lease (it died: a live reader's sweep
 * clears them, or, with none left, nothing is emitted). */
static const char *tracing_state(const struct vk_instance *in)
{
	static const char *const names[] = { "off", "decisions", "acks", "decisions+acks", "cost",
					     "decisions+cost", "acks+cost", "decisions+acks+cost" };
	__u32 bits = in->has_params ? in->params.trace & VK_TRACE_BITS : 0;

	if (!bits)
		return "off";
	return vk_tracing_live(in->name, bits) ? names[bits] : "off (reader gone)";
}

void vk_print_instance(const struct vk_instance *in, bool json)
{
	char name[VK_JSON_BUF(VK_NAME_MAX)];

	if (json) {
		printf("{\"name\":\"%s\",\"variant\":\"%s\",\"state\":\"%s\",\"restricted\":%s,"
		       "\"generation\":%u,\"registration\":\"%s\",\"link_id\":%u,\"map_id\":%u,"
		       "\"tracing\":\"%s\",\"params\":",
		       vk_json_escape(name, sizeof(name), in->name, sizeof(in->name)),
		       in->has_params ? vk_variant_name(in->params.variant) : "unknown",
		       instance_state(in),
		       in->params.ca_flags & TCP_CONG_NON_RESTRICTED ? "false" : "true",
		       in->params.generation, in->by_map ? "map" : "link", in->link_id, in->map_id,
		       tracing_state(in));
		if (in->has_params)
			vk_params_print(stdout, &in->params, true);
		else
			printf("null");
		printf("}");
		return;
	}
	printf("%-15s %-9s %-10s ", in->name,
	       in->has_params ? vk_variant_name(in->params.variant) : "?", instance_state(in));
	if (in->has_params)
		vk_params_print(stdout, &in->params, false);
	if (strcmp(tracing_state(in), "off"))
		printf(" [tracing: %s]", tracing_state(in));
	printf("\n");
}
