// SPDX-License-Identifier: GPL-2.0
/*
 * vegasctl apply FILE: bring the host to the state a configuration file
 * declares (docs/DESIGN.md §4.7). The plan is the difference between the file
 * and the live state, computed before anything changes: controllers to load,
 * reload (an interrupted load), replace (another variant, or unrestricted now)
 * or retune, namespace defaults to set, established connections to move. An
 * empty plan changes nothing and says so, so apply is idempotent; --dry-run
 * prints the plan. The steps run in that order, each one a change `load`,
 * `set` or `swap` makes (each atomic there); if one fails, the ones before it
 * are undone in reverse order. Connections already moved stay where they are
 * (moving them back could fail the same way). A SIGKILL between steps leaves
 * the steps before it done, and the next apply computes the rest.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "env.h"
#include "fault.h"
#include "format.h"
#include "instance.h"
#include "move.h"
#include "netns.h"
#include "params.h"
#include "want.h"

const char vk_usage_apply[] =
	"apply FILE [--dry-run | --check] [--json]\n"
	"\n"
	"  FILE        the state to reach: [controller.NAME], [host], [netns.NAME] and\n"
	"              [[move]] tables (TOML; see docs/DESIGN.md §4.7, or vegasctl export)\n"
	"  --dry-run   print the plan, a diff against the live state, and change nothing\n"
	"  --check     only read and check FILE (no root needed): print what it declares\n"
	"Controllers the file does not name are left alone. A second apply of the same\n"
	"file changes nothing; a failed step undoes the ones before it.\n"
	"FILE, a strict subset of TOML (what it leaves out is refused with its line):\n"
	"  [controller.NAME]   variant = \"vegas_a\"   preset = \"paper\"   unrestricted = true\n"
	"                      and any parameter of the variant: alpha = 1, gain = 0.5\n"
	"  [host]              default = \"NAME\"      the initial namespace's default\n"
	"  [netns.NAME]        default = \"NAME\"      a namespace `ip netns` names\n"
	"  [[move]]            to = \"NAME\" and filters: netns = \"N\", from = [\"cubic\"],\n"
	"                      lport, rport, port = 443, addr = \"198.18.0.1\"\n"
	"unrestricted = true is never taken back by a later file: unload to undo it.\n";

enum step_kind { ST_LOAD, ST_RELOAD, ST_REPLACE, ST_SET, ST_DEFAULT, ST_MOVE };
static const char *const step_names[] = { "load", "reload", "replace", "set", "default", "move" };

struct step {
	enum step_kind kind;
	const struct vk_want_cc *cc;
	const struct vk_want_default *def;
	const struct vk_want_move *mv;
	struct vk_params p;		/* load/reload/replace/set: what is written */
	struct vk_instance old;		/* replace/set: what was there */
	char old_default[VK_NAME_MAX];
	char what[2 * VK_ERR_MAX];	/* the diff line */
	char at[NAME_MAX + 8];		/* default, move: "host" or "netns NAME" */
	unsigned moved;
};

struct plan {
	struct step *s;
	int n;
};

static struct step *add_step(struct plan *pl, enum step_kind kind, char *err)
{
	struct step *s = realloc(pl->s, (pl->n + 1) * sizeof(*s));

	if (!s) {
		vk_err(err, "out of memory");
		return NULL;
	}
	pl->s = s;
	s = &pl->s[pl->n++];
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	return s;
}

static bool same_params(const struct vk_params *a, const struct vk_params *b)
{
	for (size_t i = 0; i < vk_nr_param_descs; i++) {
		const struct vk_param_desc *d = &vk_param_descs[i];

		if ((d->variants & (1u << a->variant)) && vk_param_value(a, d) != vk_param_value(b, d))
			return false;
	}
	return true;
}

/* "alpha 2 -> 1, beta 4 -> 3" into buf. */
static void params_diff(char *buf, size_t n, const struct vk_params *from, const struct vk_params *to)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < vk_nr_param_descs && len < n; i++) {
		const struct vk_param_desc *d = &vk_param_descs[i];
		unsigned a, b;

		if (!(d->variants & (1u << to->variant)))
			continue;
		a = vk_param_value(from, d);
		b = vk_param_value(to, d);
		if (a == b)
			continue;
		if (d->kind == VK_P_GAIN || d->kind == VK_P_FRAC)
			len += snprintf(buf + len, n - len, "%s%s %.3f -> %.3f", len ? ", " : "",
					d->key, a / 1000.0, b / 1000.0);
		else if (d->kind == VK_P_SEM)
			len += snprintf(buf + len, n - len, "%s%s %s -> %s", len ? ", " : "", d->key,
					vk_semantics_name(a), vk_semantics_name(b));
		else
			len += snprintf(buf + len, n - len, "%s%s %u -> %u", len ? ", " : "", d->key, a, b);
	}
}

/* "alpha=1 beta=3 ..." into buf. */
static void params_line(char *buf, size_t n, const struct vk_params *p)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);

	buf[0] = '\0';
	if (!f)
		return;
	vk_params_print(f, p, false);
	fclose(f);
	snprintf(buf, n, "%s", s ? s : "");
	free(s);
}

/* A load, or a reload of what `why` says is there, of a controller of the file. */
static int load_step(struct plan *pl, enum step_kind kind, const struct vk_want_cc *w,
		     const char *why, char *err)
{
	struct step *s = add_step(pl, kind, err);
	char ps[160];

	if (!s)
		return -1;
	s->cc = w;
	s->p = w->p;
	s->p.ca_flags = w->unrestricted ? TCP_CONG_NON_RESTRICTED : 0;
	params_line(ps, sizeof(ps), &s->p);
	snprintf(s->what, sizeof(s->what), "%c %s %s (%s, %s%s%s): %s", why ? '~' : '+',
		 step_names[kind], w->name, w->v->name,
		 w->unrestricted ? "unrestricted" : "restricted", why ? "; what is there is " : "",
		 why ? why : "", ps);
	return 0;
}

/* What a controller of the file needs, if anything. */
static int plan_cc(struct plan *pl, const char *file, const struct vk_want_cc *w, char *err)
{
	struct vk_instance in;
	char ps[160], diff[160];
	bool unr_now, unr_wanted;
	struct step *s;
	char e2[VK_ERR_MAX];

	if (vk_instance_read(w->name, &in, e2)) {
		if (vk_ca_available(w->name))
			return vk_err(err, "%s:%d: a congestion control named '%s' is registered, and not "
				      "by vegaskit: name the controller otherwise", file, w->line, w->name);
		return load_step(pl, ST_LOAD, w, NULL, err);
	}
	unr_now = in.registered && vk_ca_unrestricted(w->name);
	unr_wanted = w->unrestricted || unr_now;	/* never taken back (want.h) */
	if (!in.committed || !in.registered)
		return load_step(pl, ST_RELOAD, w, in.committed ? "no longer registered" :
				 "an interrupted load", err);
	if (in.other_version || !in.has_params || in.params.variant != (__u32)w->v->id ||
	    unr_wanted != unr_now || vk_params_check_live(&in.params, &w->p, e2)) {
		const char *why = in.other_version || !in.has_params ? "another vegaskit version loaded it" :
				  in.params.variant != (__u32)w->v->id ? "another variant" :
				  unr_wanted != unr_now ? "unrestricted now" : "a parameter fixed at load";

		if (vk_instance_replace_check(w->name, e2))
			return vk_err(err, "%s needs replacing in place (%s), and: %s", w->name, why, e2);
		s = add_step(pl, ST_REPLACE, err);
		if (!s)
			return -1;
		s->cc = w;
		s->old = in;
		s->p = w->p;
		s->p.ca_flags = unr_wanted ? TCP_CONG_NON_RESTRICTED : 0;
		params_line(ps, sizeof(ps), &s->p);
		snprintf(s->what, sizeof(s->what), "~ replace %s: %s -> %s (%s): %s", w->name,
			 in.has_params ? vk_variant_name(in.params.variant) : "other version",
			 w->v->name, unr_wanted ? "unrestricted" : "restricted", ps);
		return 0;
	}
	if (same_params(&in.params, &w->p))
		return 0;
	s = add_step(pl, ST_SET, err);
	if (!s)
		return -1;
	s->cc = w;
	s->old = in;
	s->p = in.params;
	for (size_t i = 0; i < vk_nr_param_descs; i++) {
		const struct vk_param_desc *d = &vk_param_descs[i];

		if (d->variants & (1u << w->p.variant))
			*(unsigned *)((char *)&s->p + d->off) = vk_param_value(&w->p, d);
	}
	s->p.generation++;
	params_diff(diff, sizeof(diff), &in.params, &s->p);
	snprintf(s->what, sizeof(s->what), "~ set %s: %s", w->name, diff);
	return 0;
}

/* Is cc there, or will the plan load it? Unrestricted then? */
static bool cc_will_exist(const struct vk_want *w, const char *cc)
{
	return vk_ca_available(cc) || vk_want_find_cc(w, cc);
}

static bool cc_will_be_unrestricted(const struct vk_want *w, const char *cc)
{
	const struct vk_want_cc *c = vk_want_find_cc(w, cc);

	return (c && c->unrestricted) || vk_ca_unrestricted(cc);
}

struct ns_read {
	char cur[VK_NAME_MAX];
	bool init;
};

static int read_ns(void *arg)
{
	struct ns_read *r = arg;

	r->init = vk_in_init_netns();
	return vk_default_read(r->cur, sizeof(r->cur));
}

static const char *where(const char *netns, char *buf, size_t n)
{
	snprintf(buf, n, "%s%s", netns[0] ? "netns " : "host", netns);
	return buf;
}

static int plan_default(struct plan *pl, const struct vk_want *w, const struct vk_want_default *d,
			char *err)
{
	struct ns_read r = {};
	char at[NAME_MAX + 8];
	struct step *s;

	where(d->netns, at, sizeof(at));
	if (!cc_will_exist(w, d->cc))
		return vk_err(err, "%s:%d: default of %s: no congestion control named '%s' is "
			      "registered or declared", w->file, d->line, at, d->cc);
	if (vk_netns_in(d->netns[0] ? d->netns : NULL, read_ns, &r, err))
		return -1;
	if (!strcmp(r.cur, d->cc))
		return 0;
	/* the kernel's refusal would leak a reference to the controller (swap, §4.5) */
	if (!r.init && !cc_will_be_unrestricted(w, d->cc))
		return vk_err(err, "%s:%d: the default of %s must be an unrestricted controller and "
			      "'%s' is restricted: set unrestricted = true in [controller.%s]",
			      w->file, d->line, at, d->cc, d->cc);
	s = add_step(pl, ST_DEFAULT, err);
	if (!s)
		return -1;
	s->def = d;
	snprintf(s->old_default, sizeof(s->old_default), "%s", r.cur);
	snprintf(s->at, sizeof(s->at), "%s", at);
	snprintf(s->what, sizeof(s->what), "~ default %s: %s -> %s", at, r.cur, d->cc);
	return 0;
}

struct ns_move {
	struct vk_swap_cfg cfg;
	struct vk_move_counts c;
	char *err;
};

static int move_ns(void *arg)
{
	struct ns_move *m = arg;

	return vk_move_established(&m->cfg, &m->c, m->err);
}

static int plan_move(struct plan *pl, const struct vk_want *w, const struct vk_want_move *mv,
		     char *err)
{
	struct ns_move m = { .cfg = mv->cfg, .err = err };
	char at[NAME_MAX + 8];
	struct step *s;

	where(mv->netns, at, sizeof(at));
	if (!cc_will_exist(w, mv->cfg.target))
		return vk_err(err, "%s:%d: move in %s: no congestion control named '%s' is registered "
			      "or declared", w->file, mv->line, at, mv->cfg.target);
	m.cfg.count_only = 1;
	if (vk_netns_in(mv->netns[0] ? mv->netns : NULL, move_ns, &m, err))
		return -1;
	if (!m.c.moved)
		return 0;
	s = add_step(pl, ST_MOVE, err);
	if (!s)
		return -1;
	s->mv = mv;
	snprintf(s->at, sizeof(s->at), "%s", at);
	snprintf(s->what, sizeof(s->what), "> move %s: %u connections onto %s", at, m.c.moved,
		 mv->cfg.target);
	return 0;
}

static int make_plan(struct plan *pl, const struct vk_want *w, char *err)
{
	for (int i = 0; i < w->ncc; i++)
		if (plan_cc(pl, w->file, &w->cc[i], err))
			return -1;
	for (int i = 0; i < w->ndef; i++)
		if (plan_default(pl, w, &w->def[i], err))
			return -1;
	for (int i = 0; i < w->nmv; i++)
		if (plan_move(pl, w, &w->mv[i], err))
			return -1;
	return 0;
}

struct ns_write {
	const char *cc;
};

static int write_ns(void *arg)
{
	const struct ns_write *nw = arg;

	return vk_default_write(nw->cc);
}

static int set_default(const char *netns, const char *cc, char *err)
{
	struct ns_write nw = { cc };
	int ret = vk_netns_in(netns[0] ? netns : NULL, write_ns, &nw, err);

	if (ret > 0 || (ret < 0 && !err[0]))
		return vk_err(err, "cannot set the default to '%s': %s", cc, strerror(errno));
	return ret;
}

static int run_step(struct step *s, char *err)
{
	switch (s->kind) {
	case ST_LOAD:
		return vk_instance_load(s->cc->v, s->cc->name, &s->p, err);
	case ST_RELOAD:
		return vk_instance_unload(s->cc->name, err) ||
		       vk_instance_load(s->cc->v, s->cc->name, &s->p, err) ? -1 : 0;
	case ST_REPLACE:
		return vk_instance_replace(s->cc->v, s->cc->name, &s->p, err);
	case ST_SET:
		return vk_instance_write_params(s->cc->name, &s->p, err);
	case ST_DEFAULT:
		return set_default(s->def->netns, s->def->cc, err);
	case ST_MOVE: {
		struct ns_move m = { .cfg = s->mv->cfg, .err = err };
		int ret = vk_netns_in(s->mv->netns[0] ? s->mv->netns : NULL, move_ns, &m, err);

		s->moved = m.c.moved;
		if (!ret && m.c.failed)
			return vk_err(err, "%u connections could not be moved: %s", m.c.failed,
				      strerror(-m.c.first_err));
		return ret;
	}
	}
	return vk_err(err, "unknown step");
}

/* Put back what a done step changed: 0; 1 when an instance is kept because
 * connections run on it; 2 for a move, which is not undone (see the top); -1 with err. */
static int undo_step(const struct step *s, char *err)
{
	struct vk_params old;

	switch (s->kind) {
	case ST_LOAD:
	case ST_RELOAD: {
		unsigned on = 0;

		/* connections moved onto it (or opened under a default since undone) would
		 * run on code no name reaches any more: it stays, and the message says so */
		if (vk_sockets_on(s->cc->name, &on, err))
			return -1;
		if (on)
			return 1;
		return vk_instance_unload(s->cc->name, err);
	}
	case ST_REPLACE: {
		const struct vk_variant_desc *v = vk_variant_by_id(s->old.params.variant);

		if (!s->old.has_params || !v)
			return vk_err(err, "%s was another vegaskit version's: it cannot be put back",
				      s->cc->name);
		old = s->old.params;
		old.generation = s->p.generation + 1;
		return vk_instance_replace(v, s->cc->name, &old, err);
	}
	case ST_SET:
		old = s->old.params;
		old.generation = s->p.generation + 1;
		return vk_instance_write_params(s->cc->name, &old, err);
	case ST_DEFAULT:
		return set_default(s->def->netns, s->old_default, err);
	case ST_MOVE:
		return 2;
	}
	return 0;
}

static void print_step(const struct step *s, bool first, bool dry_run)
{
	char what[VK_JSON_BUF(2 * VK_ERR_MAX)];

	if (!vk_cli.json) {
		if (s->kind == ST_MOVE && !dry_run)
			printf("> move %s: %u connections moved onto %s\n", s->at, s->moved,
			       s->mv->cfg.target);
		else
			printf("%s\n", s->what);
		return;
	}
	printf("%s{\"action\":\"%s\",\"change\":\"%s\"", first ? "" : ",", step_names[s->kind],
	       vk_json_escape(what, sizeof(what), s->what + 2, sizeof(s->what)));
	if (s->kind == ST_MOVE && !dry_run)
		printf(",\"moved\":%u", s->moved);
	printf("}");
}

/* "load NAME", "default netns X", ...: a step in a few words, for the error line. */
static const char *brief(const struct step *s, char *buf, size_t n)
{
	if (s->cc)
		snprintf(buf, n, "%s %s", step_names[s->kind], s->cc->name);
	else
		snprintf(buf, n, "%s %s", step_names[s->kind], s->at);
	return buf;
}

/*
 * Undo steps [0, done) in reverse; what happened is appended to err: all undone,
 * or which instances stay because connections run on them, or the undo that failed.
 */
static void roll_back(struct plan *pl, int done, char *err)
{
	char e2[VK_ERR_MAX] = "", b[NAME_MAX + 16], kept[160] = "";
	size_t len = strlen(err), klen = 0;
	int undone = 0, moves = 0;

	for (int i = done - 1; i >= 0; i--) {
		int r = undo_step(&pl->s[i], e2);

		if (r == 1)
			klen += snprintf(kept + klen, klen < sizeof(kept) ? sizeof(kept) - klen : 0,
					 "%s%s", klen ? ", " : "", pl->s[i].cc->name);
		moves += r == 2;
		undone += r == 0;
		if (r >= 0)
			continue;
		snprintf(err + len, VK_ERR_MAX - len, "; undoing '%s' failed too (%.60s): apply again "
			 "converges", brief(&pl->s[i], b, sizeof(b)), e2);
		return;
	}
	if (undone == done) {
		snprintf(err + len, VK_ERR_MAX - len, "; the %d change%s before it %s undone", done,
			 done == 1 ? "" : "s", done == 1 ? "was" : "were");
		return;
	}
	len += snprintf(err + len, VK_ERR_MAX - len, "; %d of the %d changes before it undone%s",
			undone, done, moves ? ", the connections already moved stay" : "");
	if (kept[0] && len < VK_ERR_MAX)
		snprintf(err + len, VK_ERR_MAX - len, ", and %.60s kept loaded: connections run on it",
			 kept);
}

static int execute(struct plan *pl, char *err)
{
	char e2[VK_ERR_MAX] = "", point[32];

	for (int i = 0; i < pl->n; i++) {
		snprintf(point, sizeof(point), "apply:step%d", i + 1);
		if (vk_fail_point(point) ? vk_err(e2, "failed at %s (VEGASCTL_FAIL_AT)", point) :
		    run_step(&pl->s[i], e2)) {
			char b[NAME_MAX + 16];

			snprintf(err, VK_ERR_MAX, "apply: '%.60s' failed: %.100s",
				 brief(&pl->s[i], b, sizeof(b)), e2);
			roll_back(pl, i, err);
			return -1;
		}
		if (!vk_cli.json)
			print_step(&pl->s[i], i == 0, false);
		fflush(stdout);
		vk_crash_point(point);
	}
	return 0;
}

enum { OPT_DRY_RUN = VK_OPT_CMD, OPT_CHECK };

int vk_cmd_apply(int argc, char **argv)
{
	int dry_run = 0, check = 0;
	const struct option opts[] = {
		VK_OPTS_GLOBAL,
		{ "dry-run", no_argument, &dry_run, 1 },
		{ "check", no_argument, &check, 1 },
		{}
	};
	struct vk_opts o = { .longopts = opts };
	char err[VK_ERR_MAX] = "";
	struct plan pl = {};
	struct vk_want w;
	const char *file;
	int c, ret;

	while ((c = vk_getopt(argc, argv, &o)) >= 0)
		;
	if (c == VK_OPT_EXIT)
		return o.status;
	if (optind >= argc)
		return vk_usage_error("apply: which file? (vegasctl export writes one)");
	if (argc - optind > 1)
		return vk_unexpected_arg(argv[optind + 1]);
	if (dry_run && check)
		return vk_usage_error("apply: --dry-run and --check exclude each other");
	file = argv[optind];
	if (vk_want_read(file, &w, err))
		return vk_die(err);
	if (check) {
		vk_want_print(&w, vk_cli.json);
		vk_want_free(&w);
		return 0;
	}
	ret = vk_check_env(err) || make_plan(&pl, &w, err) ? -1 : 0;
	if (!ret && !dry_run)
		ret = execute(&pl, err);
	if (!ret && vk_cli.json) {
		printf("{\"dry_run\":%s,\"changes\":[", dry_run ? "true" : "false");
		for (int i = 0; i < pl.n; i++)
			print_step(&pl.s[i], i == 0, dry_run);
		printf("]}\n");
	} else if (!ret && dry_run) {
		for (int i = 0; i < pl.n; i++)
			print_step(&pl.s[i], i == 0, true);
	}
	if (!ret && !vk_cli.json) {
		if (!pl.n)
			printf("nothing to change: the host is as %s declares\n", file);
		else if (dry_run)
			printf("plan: %d change%s (vegasctl apply %s makes %s)\n", pl.n,
			       pl.n == 1 ? "" : "s", file, pl.n == 1 ? "it" : "them");
		else
			printf("applied: %d change%s\n", pl.n, pl.n == 1 ? "" : "s");
	}
	free(pl.s);
	vk_want_free(&w);
	return ret ? vk_die(err) : 0;
}
