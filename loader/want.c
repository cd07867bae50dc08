// SPDX-License-Identifier: GPL-2.0
/* The declared state, from a configuration file's tables (want.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "filter.h"
#include "format.h"
#include "instance.h"
#include "names.h"
#include "netns.h"
#include "params.h"
#include "want.h"

#define KNOWN_TABLES "[controller.NAME], [host], [netns.NAME], [[move]]"

struct reader {
	const char *file;
	struct vk_want *w;
	char *err;
};

/* Prefix err (a message from a shared check) with FILE:LINE. */
static int at(const struct reader *r, int line, const char *msg)
{
	char m[VK_ERR_MAX];

	snprintf(m, sizeof(m), "%s", msg);
	return vk_err(r->err, "%s:%d: %s", r->file, line, m);
}

static int wrong_type(const struct reader *r, const struct vk_conf_kv *kv, const char *want)
{
	char m[VK_ERR_MAX];

	snprintf(m, sizeof(m), "'%s' must be %s, not %s", kv->key, want, vk_conf_type_name(kv->type));
	return at(r, kv->line, m);
}

static int unknown_key(const struct reader *r, const struct vk_conf_kv *kv, const char *table,
		       const char *known)
{
	char m[VK_ERR_MAX];

	snprintf(m, sizeof(m), "unknown key '%.40s' in %s (known: %s)", kv->key, table, known);
	return at(r, kv->line, m);
}

/* A string value that must be a controller name. */
static int cc_name(const struct reader *r, const struct vk_conf_kv *kv, char *out)
{
	if (kv->type != VK_CONF_STR)
		return wrong_type(r, kv, "a string");
	if (vk_check_name(kv->text, r->err))
		return at(r, kv->line, r->err);
	snprintf(out, VK_NAME_MAX, "%s", kv->text);
	return 0;
}

static int netns_name(const struct reader *r, const char *name, int line, char *out)
{
	char path[VK_NETNS_PATH_MAX];

	if (vk_netns_path(name, path, sizeof(path), r->err))
		return at(r, line, r->err);
	snprintf(out, NAME_MAX + 1, "%s", name);
	return 0;
}

/* One parameter: the TOML type its kind takes, then the same parsing as `load KEY=VALUE`. */
static int param(const struct reader *r, struct vk_params *p, const struct vk_conf_kv *kv)
{
	const struct vk_param_desc *d = vk_param_find(kv->key, p->variant);
	const char *val = kv->text;
	bool ok;

	if (!d) {
		char m[VK_ERR_MAX];

		snprintf(m, sizeof(m), "unknown key '%.40s' for variant %s (variant, preset, "
			 "unrestricted, or a parameter: see vegasctl list)", kv->key,
			 vk_variant_name(p->variant));
		return at(r, kv->line, m);
	}
	switch (d->kind) {
	case VK_P_COUNT: ok = kv->type == VK_CONF_INT; break;
	case VK_P_BOOL: ok = kv->type == VK_CONF_BOOL || kv->type == VK_CONF_INT; break;
	case VK_P_CUT: ok = kv->type == VK_CONF_INT || kv->type == VK_CONF_STR; break;
	case VK_P_GAIN:
	case VK_P_FRAC: ok = kv->type == VK_CONF_INT || kv->type == VK_CONF_REAL; break;
	case VK_P_SEM: ok = kv->type == VK_CONF_STR; break;
	default: ok = false;
	}
	if (!ok)
		return wrong_type(r, kv, d->kind == VK_P_SEM ? "a string" :
				  d->kind == VK_P_COUNT ? "an integer" :
				  d->kind == VK_P_BOOL ? "true or false" :
				  d->kind == VK_P_CUT ? "\"1/2\" or \"1/4\"" : "a number");
	if (kv->type == VK_CONF_BOOL)
		val = strcmp(kv->text, "true") ? "0" : "1";
	if (vk_param_set(p, kv->key, val, r->err))
		return at(r, kv->line, r->err);
	return 0;
}

static const struct vk_conf_kv *get(const struct vk_conf_table *t, const char *key)
{
	for (int i = 0; i < t->nkv; i++)
		if (!strcmp(t->kv[i].key, key))
			return &t->kv[i];
	return NULL;
}

static int read_controller(const struct reader *r, const struct vk_conf_table *t)
{
	const struct vk_conf_kv *variant = get(t, "variant"), *preset = get(t, "preset"),
				*unr = get(t, "unrestricted");
	struct vk_want *w = r->w;
	struct vk_want_cc *c;
	char m[VK_ERR_MAX];

	c = realloc(w->cc, (w->ncc + 1) * sizeof(*c));
	if (!c)
		return vk_err(r->err, "out of memory");
	w->cc = c;
	c = &w->cc[w->ncc];
	memset(c, 0, sizeof(*c));
	c->line = t->line;
	if (vk_check_name(t->path[1], r->err))
		return at(r, t->line, r->err);
	snprintf(c->name, sizeof(c->name), "%s", t->path[1]);
	if (!variant) {
		snprintf(m, sizeof(m), "[controller.%s] needs a variant (see: vegasctl list)", c->name);
		return at(r, t->line, m);
	}
	if (variant->type != VK_CONF_STR)
		return wrong_type(r, variant, "a string");
	c->v = vk_variant_by_name(variant->text);
	if (!c->v) {
		snprintf(m, sizeof(m), "unknown variant '%.40s' (see: vegasctl list)", variant->text);
		return at(r, variant->line, m);
	}
	if (vk_default_params(c->v, &c->p, r->err))
		return -1;
	if (preset && preset->type != VK_CONF_STR)
		return wrong_type(r, preset, "a string");
	if (preset && vk_preset_apply(&c->p, preset->text, r->err))
		return at(r, preset->line, r->err);
	if (unr && unr->type != VK_CONF_BOOL)
		return wrong_type(r, unr, "true or false");
	c->unrestricted = unr && !strcmp(unr->text, "true");
	for (int i = 0; i < t->nkv; i++) {
		const struct vk_conf_kv *kv = &t->kv[i];

		if (kv != variant && kv != preset && kv != unr && param(r, &c->p, kv))
			return -1;
	}
	if (vk_params_validate(&c->p, r->err))
		return at(r, t->line, r->err);
	w->ncc++;
	return 0;
}

/* [host] or [netns.NAME]: its default. */
static int read_default(const struct reader *r, const struct vk_conf_table *t, const char *netns)
{
	struct vk_want *w = r->w;
	struct vk_want_default *d;
	const char *table = netns ? "[netns.NAME]" : "[host]";

	char name[NAME_MAX + 1];

	for (int i = 0; i < t->nkv; i++)
		if (strcmp(t->kv[i].key, "default"))
			return unknown_key(r, &t->kv[i], table, "default");
	if (netns && netns_name(r, netns, t->line, name))
		return -1;
	if (!t->nkv)
		return 0;
	d = realloc(w->def, (w->ndef + 1) * sizeof(*d));
	if (!d)
		return vk_err(r->err, "out of memory");
	w->def = d;
	d = &w->def[w->ndef];
	memset(d, 0, sizeof(*d));
	d->line = t->kv[0].line;
	if (netns && netns_name(r, netns, t->line, d->netns))
		return -1;
	if (cc_name(r, &t->kv[0], d->cc))
		return -1;
	w->ndef++;
	return 0;
}

static int move_key(const struct reader *r, struct vk_want_move *m, const struct vk_conf_kv *kv)
{
	struct vk_filter *f = &m->cfg.filter;
	int *port = !strcmp(kv->key, "lport") ? &f->lport : !strcmp(kv->key, "rport") ? &f->rport :
		    !strcmp(kv->key, "port") ? &f->port : NULL;

	if (!strcmp(kv->key, "to"))
		return cc_name(r, kv, m->cfg.target);
	if (port && kv->type != VK_CONF_INT)
		return wrong_type(r, kv, "an integer");
	if (port && vk_filter_port(kv->text, port, r->err))
		return at(r, kv->line, r->err);
	if (port)
		return 0;
	if (!strcmp(kv->key, "netns")) {
		if (kv->type != VK_CONF_STR)
			return wrong_type(r, kv, "a string");
		return netns_name(r, kv->text, kv->line, m->netns);
	}
	if (!strcmp(kv->key, "addr")) {
		if (kv->type != VK_CONF_STR)
			return wrong_type(r, kv, "a string");
		return vk_filter_addr(f, kv->text, r->err) ? at(r, kv->line, r->err) : 0;
	}
	if (!strcmp(kv->key, "from")) {
		if (kv->type == VK_CONF_STR)
			return vk_filter_controller(f, kv->text, r->err) ? at(r, kv->line, r->err) : 0;
		if (kv->type != VK_CONF_STRS)
			return wrong_type(r, kv, "a string or an array of strings");
		/* no controllers would be no filter: every connection, the opposite of [] */
		if (!kv->nstrs)
			return at(r, kv->line, "from = [] names no controller: name at least one, or "
				  "leave 'from' out to move connections from any");
		for (int i = 0; i < kv->nstrs; i++)
			if (vk_filter_controller(f, kv->strs[i], r->err))
				return at(r, kv->line, r->err);
		return 0;
	}
	return unknown_key(r, kv, "[[move]]", "to, netns, from, lport, rport, port, addr");
}

static int read_move(const struct reader *r, const struct vk_conf_table *t)
{
	struct vk_want *w = r->w;
	struct vk_want_move *m = realloc(w->mv, (w->nmv + 1) * sizeof(*m));

	if (!m)
		return vk_err(r->err, "out of memory");
	w->mv = m;
	m = &w->mv[w->nmv];
	memset(m, 0, sizeof(*m));
	vk_filter_init(&m->cfg.filter);
	m->line = t->line;
	for (int i = 0; i < t->nkv; i++)
		if (move_key(r, m, &t->kv[i]))
			return -1;
	if (!m->cfg.target[0])
		return at(r, t->line, "[[move]] needs 'to', the controller to move connections onto");
	w->nmv++;
	return 0;
}

static int read_table(const struct reader *r, const struct vk_conf_table *t)
{
	const char *top = t->depth ? t->path[0] : "";
	char m[VK_ERR_MAX];

	/* made by a deeper header only: that header's own table says what is wrong */
	if (t->implicit)
		return 0;
	if (t->depth && t->array != (t->depth == 1 && !strcmp(top, "move"))) {
		snprintf(m, sizeof(m), "%s: write [%s%s%s]%s", t->array ? "an array of tables" :
			 "a table", t->array ? "" : "[", top, t->depth > 1 ? ".NAME" : "",
			 t->array ? "" : "]");
		return at(r, t->line, m);
	}
	if (!t->depth && t->nkv)
		return at(r, t->kv[0].line, "keys before the first table: every key belongs to one of "
			  KNOWN_TABLES);
	if (!t->depth)
		return 0;
	if (t->depth == 2 && !strcmp(top, "controller"))
		return read_controller(r, t);
	if (t->depth == 2 && !strcmp(top, "netns"))
		return read_default(r, t, t->path[1]);
	if (t->depth == 1 && !strcmp(top, "host"))
		return read_default(r, t, NULL);
	if (t->depth == 1 && t->array && !strcmp(top, "move"))
		return read_move(r, t);
	if (t->depth == 1 && !t->array && (!strcmp(top, "controller") || !strcmp(top, "netns"))) {
		if (!t->nkv)
			return 0;
		snprintf(m, sizeof(m), "[%s] takes no keys: write [%s.NAME]", top, top);
		return at(r, t->kv[0].line, m);
	}
	snprintf(m, sizeof(m), "unknown table '%.40s%s' (known: " KNOWN_TABLES ")", top,
		 t->depth > 1 ? ".*" : "");
	return at(r, t->line, m);
}

int vk_want_read(const char *file, struct vk_want *w, char *err)
{
	struct reader r = { .file = file, .w = w, .err = err };
	struct vk_conf c;
	int ret = 0;

	memset(w, 0, sizeof(*w));
	w->file = file;
	if (vk_conf_read(file, &c, err))
		return -1;
	for (int i = 0; i < c.nt && !ret; i++)
		ret = read_table(&r, &c.t[i]);
	vk_conf_free(&c);
	if (ret)
		vk_want_free(w);
	return ret;
}

void vk_want_free(struct vk_want *w)
{
	free(w->cc);
	free(w->def);
	free(w->mv);
	w->cc = NULL;
	w->def = NULL;
	w->mv = NULL;
	w->ncc = w->ndef = w->nmv = 0;
}

const struct vk_want_cc *vk_want_find_cc(const struct vk_want *w, const char *name)
{
	for (int i = 0; i < w->ncc; i++)
		if (!strcmp(w->cc[i].name, name))
			return &w->cc[i];
	return NULL;
}

static const char *json_str(char *buf, size_t n, const char *s)
{
	return vk_json_escape(buf, n, s, NAME_MAX);
}

static void print_move_json(const struct vk_want_move *m)
{
	const struct vk_filter *f = &m->cfg.filter;
	char ns[VK_JSON_BUF(NAME_MAX)], addr[64] = "";

	if (f->has_addr)
		vk_format_addr(f->addr, addr, sizeof(addr));
	printf("{\"netns\":\"%s\",\"to\":\"%s\",\"from\":[", json_str(ns, sizeof(ns), m->netns),
	       m->cfg.target);
	for (unsigned i = 0; i < f->ncc; i++)
		printf("%s\"%s\"", i ? "," : "", f->cc[i]);
	printf("],\"lport\":%d,\"rport\":%d,\"port\":%d,\"addr\":\"%s\"}", f->lport, f->rport,
	       f->port, addr);
}

void vk_want_print(const struct vk_want *w, bool json)
{
	char ns[VK_JSON_BUF(NAME_MAX)];

	if (!json) {
		for (int i = 0; i < w->ncc; i++) {
			printf("controller %s (%s, %s): ", w->cc[i].name, w->cc[i].v->name,
			       w->cc[i].unrestricted ? "unrestricted" : "restricted");
			vk_params_print(stdout, &w->cc[i].p, false);
			printf("\n");
		}
		for (int i = 0; i < w->ndef; i++)
			printf("default %s%s: %s\n", w->def[i].netns[0] ? "netns " : "host",
			       w->def[i].netns, w->def[i].cc);
		for (int i = 0; i < w->nmv; i++)
			printf("move %s%s: onto %s\n", w->mv[i].netns[0] ? "netns " : "host",
			       w->mv[i].netns, w->mv[i].cfg.target);
		return;
	}
	printf("{\"controllers\":[");
	for (int i = 0; i < w->ncc; i++) {
		printf("%s{\"name\":\"%s\",\"variant\":\"%s\",\"unrestricted\":%s,\"params\":",
		       i ? "," : "", w->cc[i].name, w->cc[i].v->name,
		       w->cc[i].unrestricted ? "true" : "false");
		vk_params_print(stdout, &w->cc[i].p, true);
		printf("}");
	}
	printf("],\"defaults\":[");
	for (int i = 0; i < w->ndef; i++)
		printf("%s{\"netns\":\"%s\",\"cc\":\"%s\"}", i ? "," : "",
		       json_str(ns, sizeof(ns), w->def[i].netns), w->def[i].cc);
	printf("],\"moves\":[");
	for (int i = 0; i < w->nmv; i++) {
		printf("%s", i ? "," : "");
		print_move_json(&w->mv[i]);
	}
	printf("]}\n");
}
