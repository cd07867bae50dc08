// SPDX-License-Identifier: GPL-2.0
/* Parameter tables, parsing, validation and printing (params.h). */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "format.h"
#include "params.h"
#include "variants.h"

#define ALL	((1u << VK_NR_VARIANTS) - 1)
#define PLUS	(1u << VK_VEGAS_PLUS)
#define THRESH	((1u << VK_VEGAS) | (1u << VK_VEGAS_A) | (1u << VK_PIPE) | PLUS)
#define ADAPT	((1u << VK_VEGAS_A) | (1u << VK_PIPE))
#define FR	(1u << VK_VEGAS_FR)
#define OFF(f)	offsetof(struct vk_params, f)

const struct vk_param_desc vk_param_descs[] = {
	{ "alpha", VK_P_COUNT, OFF(alpha), THRESH,
	  "lower backlog threshold, packets (vegas_a/pipe: initial per-socket value)", false },
	{ "beta", VK_P_COUNT, OFF(beta), THRESH,
	  "upper backlog threshold, packets (vegas_a/pipe: initial per-socket value)", false },
	{ "gamma", VK_P_COUNT, OFF(gamma), ALL, "slow-start exit threshold, packets", false },
	{ "alpha_max", VK_P_COUNT, OFF(alpha_max), ADAPT, "cap on the adaptive alpha", false },
	{ "ref_bytes", VK_P_COUNT, OFF(ref_bytes), FR, "reference backlog R, bytes (> mss/2)", false },
	{ "gain", VK_P_GAIN, OFF(gain_milli), FR, "proportional gain k in (0, 1]", false },
	{ "ss_every_other_rtt", VK_P_BOOL, OFF(ss_every_other_rtt), ALL,
	  "1: original Vegas slow start, doubling every other RTT (seed 001, 2.1)", false },
	{ "loss_cut", VK_P_CUT, OFF(loss_cut), ALL,
	  "window cut on loss: 2 halves (Linux), 4 cuts by 1/4 (original Vegas)", false },
	{ "th_tie", VK_P_FRAC, OFF(th_tie_milli), ADAPT,
	  "semantics=paper: Th and Th' tie within this many packets per round (default 0.5)", false },
	{ "semantics", VK_P_SEM, OFF(semantics), ALL,
	  "exact: round's min RTT, exact fractions (Linux); paper: the papers' ns-2 agent "
	  "(vegas_fr, vegas_plus: the round's average RTT only)", false },
	{ "half_packet", VK_P_BOOL, OFF(half_packet), FR,
	  "1: Q carries the half-packet correction of seed 004, section V", false },
	{ "foreign_max", VK_P_COUNT, OFF(foreign_max), PLUS,
	  "foreign queue, packets, that held 3 rounds means a buffer-filler (competitive mode)", false },
	{ "compete", VK_P_BOOL, OFF(compete), PLUS,
	  "1: switch to competitive mode against buffer-fillers; 0: delay mode only", false },
	{ "compete_ss", VK_P_COUNT, OFF(compete_ss), PLUS,
	  "entering competitive mode: 1 slow start to the first loss; 2 only up to the best rate's window; 0 none", false },
	{ "rate_epoch", VK_P_COUNT, OFF(rate_epoch), PLUS,
	  "delay-mode rounds in an epoch of the rate maximum, which forgets after two (8-4096)", false },
	{ "rise", VK_P_COUNT, OFF(rise), PLUS,
	  "percent the round RTT held 3 rounds above its lowest of the rate epochs that means a loss-based flow (0: off, to 1000)", false },
	{ "keep_base_rtt", VK_P_BOOL, OFF(keep_base_rtt), ALL,
	  "1: a socket swapped in from another vegaskit controller keeps its baseRTT", false },
	{ "idle_relearn", VK_P_BOOL, OFF(idle_relearn), ALL,
	  "1: sending after idle or from nothing in flight relearns baseRTT (tcp_vegas.c); 0: keeps it (ns-2)", false },
	{ "calls", VK_P_COUNT, OFF(calls), ALL,
	  "struct_ops calls per ACK, fixed at load: 2 (pkts_acked, cong_avoid); 1 (cong_control, Linux >= 6.10)",
	  .at_load = true },
};
const size_t vk_nr_param_descs = sizeof(vk_param_descs) / sizeof(vk_param_descs[0]);

struct vk_preset {
	const char *name;
	unsigned variants;
	const char *settings;	/* parsed by vk_param_apply, space separated */
	const char *why;
};

static const struct vk_preset vk_presets[] = {
	{ "linux", 1u << VK_VEGAS, "alpha=2 beta=4 gamma=1", "Linux tcp_vegas.c defaults" },
	{ "brakmo", 1u << VK_VEGAS, "alpha=1 beta=3 gamma=1", "Brakmo and Peterson's thresholds" },
	{ "ns2", 1u << VK_VEGAS, "alpha=1 beta=3 gamma=1 semantics=paper",
	  "the papers' baseline: ns-2's Vegas agent and its thresholds" },
	{ "samios", 1u << VK_VEGAS, "alpha=6 beta=6 gamma=6",
	  "seed 001: alpha = beta, gamma = (alpha+beta)/2 (section 2.1)" },
	{ "original", 1u << VK_VEGAS, "alpha=1 beta=3 gamma=1 ss_every_other_rtt=1 loss_cut=4",
	  "original Vegas mechanics of seed 001, section 2.1" },
	/*
	 * Seed 003's alpha/beta study (Figs. 4-10). Its text calls the values
	 * "half-packet units" (the old Linux sysctl wording) while its ns-2 runs
	 * use them as packets; we take them as packets, the unit of every other
	 * threshold here.
	 */
	{ "eq20", 1u << VK_VEGAS, "alpha=20 beta=20", "seed 003 Fig. 4: large, equal" },
	{ "eq40", 1u << VK_VEGAS, "alpha=40 beta=40", "seed 003 Fig. 5" },
	{ "eq80", 1u << VK_VEGAS, "alpha=80 beta=80", "seed 003 Fig. 7" },
	{ "eq120", 1u << VK_VEGAS, "alpha=120 beta=120", "seed 003 Fig. 8" },
	{ "uneq20_40", 1u << VK_VEGAS, "alpha=20 beta=40", "seed 003 Fig. 9: unequal" },
	{ "uneq40_80", 1u << VK_VEGAS, "alpha=40 beta=80", "seed 003 Fig. 10: unequal" },
	{ "paper", (1u << VK_VEGAS_A) | (1u << VK_PIPE), "alpha=1 beta=3 alpha_max=64 semantics=paper",
	  "seeds 000/002: alpha, beta start at 1 and 3" },
	{ "fr3k", 1u << VK_VEGAS_FR, "ref_bytes=3000", "seed 004 Fig. 3: R = 3 kB" },
	{ "fr131k", 1u << VK_VEGAS_FR, "ref_bytes=131070", "seed 004 Figs. 5, 9: R = 131070 B" },
};

static unsigned *field(struct vk_params *p, const struct vk_param_desc *d)
{
	return (unsigned *)((char *)p + d->off);
}

unsigned vk_param_value(const struct vk_params *p, const struct vk_param_desc *d)
{
	return *(const unsigned *)((const char *)p + d->off);
}

/* The parameter named by the first len bytes of key, if variant v has it. */
static const struct vk_param_desc *find_n(const char *key, size_t len, enum vk_variant v)
{
	for (size_t i = 0; i < vk_nr_param_descs; i++) {
		const struct vk_param_desc *d = &vk_param_descs[i];

		if (strlen(d->key) == len && !strncmp(d->key, key, len) && (d->variants & (1u << v)))
			return d;
	}
	return NULL;
}

const struct vk_param_desc *vk_param_find(const char *key, enum vk_variant v)
{
	return find_n(key, strlen(key), v);
}

static int parse_count(const char *s, unsigned *out)
{
	unsigned long long v;

	if (vk_parse_uint(s, 0xffffffffull, &v))
		return -1;
	*out = (unsigned)v;
	return 0;
}

int vk_param_check_unique(const char *const *kvs, int n, char *err)
{
	for (int i = 0; i < n; i++) {
		size_t len = strcspn(kvs[i], "=");

		for (int j = 0; j < i; j++)
			if (strcspn(kvs[j], "=") == len && !strncmp(kvs[i], kvs[j], len))
				return vk_err(err, "'%.*s' is given twice: give each parameter once",
					      (int)len, kvs[i]);
	}
	return 0;
}

static int parse_value(const struct vk_param_desc *d, const char *val, unsigned *out, char *err)
{
	double g;
	int frac;

	switch (d->kind) {
	case VK_P_COUNT:
		if (parse_count(val, out) == 0)
			return 0;
		snprintf(err, VK_ERR_MAX, "%s: '%s' is not a non-negative integer", d->key, val);
		return -1;
	case VK_P_BOOL:
		if (parse_count(val, out) == 0 && *out <= 1)
			return 0;
		snprintf(err, VK_ERR_MAX, "%s: '%s' must be 0 or 1", d->key, val);
		return -1;
	case VK_P_CUT:
		if (!strcmp(val, "1/2") || !strcmp(val, "2")) {
			*out = 2;
			return 0;
		}
		if (!strcmp(val, "1/4") || !strcmp(val, "4")) {
			*out = 4;
			return 0;
		}
		snprintf(err, VK_ERR_MAX, "%s: '%s' must be 1/2 or 1/4", d->key, val);
		return -1;
	case VK_P_SEM:
		for (unsigned i = 0; i < VK_NR_SEMANTICS; i++)
			if (!strcmp(val, vk_semantics_name(i))) {
				*out = i;
				return 0;
			}
		snprintf(err, VK_ERR_MAX, "%s: '%s' must be exact or paper", d->key, val);
		return -1;
	case VK_P_GAIN:
	case VK_P_FRAC:
		if (vk_parse_decimal(val, &g, &frac) || !(g >= 0.0 && g <= 1.0) ||
		    (d->kind == VK_P_GAIN && g == 0.0)) {
			snprintf(err, VK_ERR_MAX, "%s: '%s' must be a number in %s", d->key, val,
				 d->kind == VK_P_GAIN ? "(0, 1]" : "[0, 1]");
			return -1;
		}
		/* stored in thousandths: a finer value would be rounded silently */
		if (frac > 3) {
			snprintf(err, VK_ERR_MAX, "%s: '%s' is finer than the resolution 0.001: "
				 "give at most 3 decimals", d->key, val);
			return -1;
		}
		*out = (unsigned)(g * 1000.0 + 0.5);
		return 0;
	}
	return -1;
}

/* Apply the parameter named by key[0..len) with value val; nothing is copied, so
 * no argument is too long to be judged whole. */
static int apply_n(struct vk_params *p, const char *key, size_t len, const char *val, char *err)
{
	const struct vk_param_desc *d = find_n(key, len, p->variant);
	unsigned v;

	if (!d)
		return vk_err(err, "unknown parameter '%.*s' for variant %s (see: vegasctl list)",
			      (int)(len > 40 ? 40 : len), key, vk_variant_name(p->variant));
	if (parse_value(d, val, &v, err))
		return -1;
	*field(p, d) = v;
	return 0;
}

int vk_param_apply(struct vk_params *p, const char *kv, char *err)
{
	const char *eq = strchr(kv, '=');

	if (!eq || eq == kv)
		return vk_err(err, "'%s': expected key=value", kv);
	return apply_n(p, kv, eq - kv, eq + 1, err);
}

int vk_param_set(struct vk_params *p, const char *key, const char *val, char *err)
{
	return apply_n(p, key, strlen(key), val, err);
}

int vk_preset_apply(struct vk_params *p, const char *preset, char *err)
{
	for (size_t i = 0; i < sizeof(vk_presets) / sizeof(vk_presets[0]); i++) {
		const struct vk_preset *ps = &vk_presets[i];
		char buf[256], *tok, *save;

		if (strcmp(ps->name, preset) || !(ps->variants & (1u << p->variant)))
			continue;
		snprintf(buf, sizeof(buf), "%s", ps->settings);
		for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
			if (vk_param_apply(p, tok, err))
				return -1;
		return 0;
	}
	snprintf(err, VK_ERR_MAX, "unknown preset '%s' for variant %s (see: vegasctl list)",
		 preset, vk_variant_name(p->variant));
	return -1;
}

int vk_params_validate(const struct vk_params *p, char *err)
{
	bool thresh = vk_param_find("alpha", p->variant) != NULL;

	if (thresh && p->alpha > p->beta) {
		snprintf(err, VK_ERR_MAX, "alpha (%u) must not exceed beta (%u)", p->alpha, p->beta);
		return -1;
	}
	if (vk_param_find("alpha_max", p->variant)) {
		/* Vegas-A/PIPE never let alpha fall below 1 (docs/DESIGN.md §3). */
		if (p->alpha < 1) {
			snprintf(err, VK_ERR_MAX, "alpha must be >= 1 for %s", vk_variant_name(p->variant));
			return -1;
		}
		if (p->alpha_max < p->alpha) {
			snprintf(err, VK_ERR_MAX, "alpha_max (%u) must be >= alpha (%u)",
				 p->alpha_max, p->alpha);
			return -1;
		}
	}
	if (p->variant == VK_VEGAS_PLUS && p->foreign_max < 1) {
		/* 0 would take any queueing delay for a competitor's queue */
		snprintf(err, VK_ERR_MAX, "foreign_max must be >= 1 packet");
		return -1;
	}
	if (p->variant == VK_VEGAS_PLUS && p->compete_ss > VK_PLUS_SS_CAPPED) {
		snprintf(err, VK_ERR_MAX, "compete_ss must be 0, 1 or 2 (got %u)", p->compete_ss);
		return -1;
	}
	if (p->variant == VK_VEGAS_PLUS &&
	    (p->rate_epoch < VK_PLUS_RATE_EPOCH_MIN || p->rate_epoch > VK_PLUS_RATE_EPOCH_MAX)) {
		snprintf(err, VK_ERR_MAX, "rate_epoch must be %u to %u rounds (got %u)",
			 VK_PLUS_RATE_EPOCH_MIN, VK_PLUS_RATE_EPOCH_MAX, p->rate_epoch);
		return -1;
	}
	if (p->variant == VK_VEGAS_PLUS && p->rise > 1000) {
		snprintf(err, VK_ERR_MAX, "rise must be 0 (off) to 1000 percent (got %u)", p->rise);
		return -1;
	}
	if (p->calls != 1 && p->calls != 2) {
		snprintf(err, VK_ERR_MAX, "calls must be 1 or 2 (got %u)", p->calls);
		return -1;
	}
	if (p->variant == VK_VEGAS_FR) {
		/* vegas_fr: Q carries +mss/2, so R <= mss/2 could never be met. */
		if (p->ref_bytes <= VK_FR_MSS_MAX / 2) {
			snprintf(err, VK_ERR_MAX, "ref_bytes (%u) must exceed mss/2 = %u bytes",
				 p->ref_bytes, VK_FR_MSS_MAX / 2);
			return -1;
		}
		/* A backlog target no send buffer can hold is never reached: cwnd would
		 * only grow, by gain*R/mss packets an RTT (docs/DESIGN.md §11.12). */
		if (p->ref_bytes > VK_FR_REF_MAX) {
			snprintf(err, VK_ERR_MAX, "ref_bytes (%u) must be at most %u bytes "
				 "(16 MiB: four times tcp_wmem's default maximum)",
				 p->ref_bytes, VK_FR_REF_MAX);
			return -1;
		}
		if (p->gain_milli < 1 || p->gain_milli > 1000) {
			snprintf(err, VK_ERR_MAX, "gain must be in (0, 1]");
			return -1;
		}
	}
	return 0;
}

int vk_params_check_live(const struct vk_params *from, const struct vk_params *to, char *err)
{
	for (size_t i = 0; i < vk_nr_param_descs; i++) {
		const struct vk_param_desc *d = &vk_param_descs[i];

		if (d->at_load && (d->variants & (1u << to->variant)) &&
		    vk_param_value(from, d) != vk_param_value(to, d))
			return vk_err(err, "%s is fixed when the controller is registered: "
				      "give %s=%u to load --replace", d->key, d->key,
				      vk_param_value(to, d));
	}
	return 0;
}

static void print_value(FILE *f, const struct vk_param_desc *d, unsigned v, bool json)
{
	if (d->kind == VK_P_GAIN || d->kind == VK_P_FRAC)
		fprintf(f, "%.3f", v / 1000.0);
	else if (d->kind == VK_P_CUT)
		fprintf(f, json ? "\"1/%u\"" : "1/%u", v);
	else if (d->kind == VK_P_SEM)
		fprintf(f, json ? "\"%s\"" : "%s", vk_semantics_name(v));
	else
		fprintf(f, "%u", v);
}

void vk_params_print(FILE *f, const struct vk_params *p, bool json)
{
	bool first = true;

	if (json)
		fputc('{', f);
	for (size_t i = 0; i < vk_nr_param_descs; i++) {
		const struct vk_param_desc *d = &vk_param_descs[i];

		if (!(d->variants & (1u << p->variant)))
			continue;
		if (json)
			fprintf(f, "%s\"%s\":", first ? "" : ",", d->key);
		else
			fprintf(f, "%s%s=", first ? "" : " ", d->key);
		print_value(f, d, vk_param_value(p, d), json);
		first = false;
	}
	if (json)
		fputc('}', f);
}

void vk_params_print_toml(FILE *f, const struct vk_params *p)
{
	for (size_t i = 0; i < vk_nr_param_descs; i++) {
		const struct vk_param_desc *d = &vk_param_descs[i];

		if (!(d->variants & (1u << p->variant)))
			continue;
		fprintf(f, "%s = ", d->key);
		print_value(f, d, vk_param_value(p, d), true);	/* JSON's values are TOML's */
		fputc('\n', f);
	}
}

void vk_presets_print(FILE *f, enum vk_variant v, bool json)
{
	bool first = true;

	if (json)
		fputc('{', f);
	for (size_t i = 0; i < sizeof(vk_presets) / sizeof(vk_presets[0]); i++) {
		const struct vk_preset *ps = &vk_presets[i];

		if (!(ps->variants & (1u << v)))
			continue;
		if (json)
			fprintf(f, "%s\"%s\":\"%s\"", first ? "" : ",", ps->name, ps->settings);
		else
			fprintf(f, "    %-10s %-55s %s\n", ps->name, ps->settings, ps->why);
		first = false;
	}
	if (json)
		fputc('}', f);
}
