// SPDX-License-Identifier: GPL-2.0
/*
 * The strict TOML subset of vegaskit's configuration file (conf.h). One pass
 * over the lines: a header opens a table, a `key = value` line adds to the
 * open one. The TOML 1.0 rules kept are the ones that decide what a document
 * means: no key defined twice, no table defined twice, a key and a table of
 * the same name conflict, [[a]] and [a] conflict.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "conf.h"

struct parser {
	const char *name;	/* the file, for messages */
	const char *p, *end;	/* the rest of the current line */
	int line;
	char *err;
	struct vk_conf *c;
	struct vk_conf_table *cur;
};

static int fail(struct parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* How many of s's first max bytes end on a character boundary (s is UTF-8). */
static int cut(const char *s, size_t max)
{
	size_t n = strnlen(s, max);

	if (n == max)
		while (n && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	return (int)n;
}

static int fail(struct parser *ps, const char *fmt, ...)
{
	char msg[VK_ERR_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	n = snprintf(ps->err, VK_ERR_MAX, "%s:%d: ", ps->name, ps->line);
	if (n < VK_ERR_MAX)
		snprintf(ps->err + n, VK_ERR_MAX - n, "%.*s", cut(msg, VK_ERR_MAX - n - 1), msg);
	return -1;
}

const char *vk_conf_type_name(enum vk_conf_type t)
{
	static const char *const names[] = { "a string", "an integer", "a decimal number",
					     "a boolean", "an array of strings" };

	return t <= VK_CONF_STRS ? names[t] : "?";
}

/* TOML documents are UTF-8: 0, or the offset of the first bad byte + 1. */
static unsigned long bad_utf8(const unsigned char *s, unsigned long n)
{
	for (unsigned long i = 0, len; i < n; i += len) {
		len = vk_utf8_len(s + i, n - i);
		if (!len)
			return i + 1;
	}
	return 0;
}

/* The character at ps->p for a message: whole, even when it takes several bytes (the
 * document is valid UTF-8 by then, so the lead byte gives the length). */
static const char *shown(const struct parser *ps)
{
	static char buf[5];
	unsigned char c = (unsigned char)*ps->p;
	size_t n = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;

	if (n > (size_t)(ps->end - ps->p))
		n = 1;
	memcpy(buf, ps->p, n);
	buf[n] = '\0';
	return buf;
}

static bool is_bare(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '_' || ch == '-';
}

static void skip_ws(struct parser *ps)
{
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t'))
		ps->p++;
}

/* After a header or a value: blanks, then a comment or the end of the line. */
static int expect_eol(struct parser *ps, const char *after)
{
	skip_ws(ps);
	if (ps->p == ps->end || *ps->p == '#')
		return 0;
	return fail(ps, "unexpected '%s' after %s (one key = value or [table] a line)",
		    shown(ps), after);
}

static char *dup_n(struct parser *ps, const char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (!d) {
		fail(ps, "out of memory");
		return NULL;
	}
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

/* \uXXXX or \UXXXXXXXX at ps->p (on the u): the code point as UTF-8 at *o. */
static int unicode_escape(struct parser *ps, char **o)
{
	int n = *ps->p == 'u' ? 4 : 8;
	unsigned long cp = 0;

	for (int i = 1; i <= n; i++) {
		char h = ps->p + i < ps->end ? ps->p[i] : '\0';
		int v = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 :
			h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;

		if (v < 0)
			return fail(ps, "\\%c needs %d hexadecimal digits", *ps->p, n);
		cp = cp << 4 | (unsigned long)v;
	}
	if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return fail(ps, "\\%.*s is not a Unicode scalar value", n + 1, ps->p);
	if (!cp)
		return fail(ps, "a NUL character in a string is not supported here");
	ps->p += n;
	if (cp < 0x80) {
		*(*o)++ = (char)cp;
	} else if (cp < 0x800) {
		*(*o)++ = (char)(0xc0 | cp >> 6);
		*(*o)++ = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		*(*o)++ = (char)(0xe0 | cp >> 12);
		*(*o)++ = (char)(0x80 | (cp >> 6 & 0x3f));
		*(*o)++ = (char)(0x80 | (cp & 0x3f));
	} else {
		*(*o)++ = (char)(0xf0 | cp >> 18);
		*(*o)++ = (char)(0x80 | (cp >> 12 & 0x3f));
		*(*o)++ = (char)(0x80 | (cp >> 6 & 0x3f));
		*(*o)++ = (char)(0x80 | (cp & 0x3f));
	}
	return 0;
}

/* A basic "..." or literal '...' string at ps->p, one line, into *out. */
static int parse_string(struct parser *ps, char **out)
{
	char q = *ps->p, *buf, *o;

	if (ps->end - ps->p >= 3 && ps->p[1] == q && ps->p[2] == q)
		return fail(ps, "multi-line strings are not supported here: write the string on one line");
	buf = malloc(ps->end - ps->p);
	if (!buf)
		return fail(ps, "out of memory");
	o = buf;
	for (ps->p++; ps->p < ps->end && *ps->p != q; ps->p++) {
		unsigned char ch = (unsigned char)*ps->p;

		if ((ch < 0x20 && ch != '\t') || ch == 0x7f) {
			free(buf);
			return fail(ps, "a control character inside a string: TOML does not allow it");
		}
		if (ch != '\\' || q == '\'') {
			*o++ = (char)ch;
			continue;
		}
		if (++ps->p == ps->end)
			break;
		switch (*ps->p) {
		case '"': *o++ = '"'; break;
		case '\\': *o++ = '\\'; break;
		case 't': *o++ = '\t'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'u':
		case 'U':
			if (unicode_escape(ps, &o)) {
				free(buf);
				return -1;
			}
			break;
		default:
			free(buf);
			return fail(ps, "'\\%c' is not a TOML escape", *ps->p);
		}
	}
	if (ps->p == ps->end) {
		free(buf);
		return fail(ps, "a string is not closed on its line");
	}
	ps->p++;
	*o = '\0';
	*out = buf;
	return 0;
}

/* One key: bare (letters, digits, '_', '-') or a quoted string. */
static int parse_key(struct parser *ps, char **out)
{
	const char *s = ps->p;

	if (ps->p < ps->end && (*ps->p == '"' || *ps->p == '\''))
		return parse_string(ps, out);
	while (ps->p < ps->end && is_bare(*ps->p))
		ps->p++;
	if (ps->p == s)
		return ps->p < ps->end ? fail(ps, "expected a key, found '%s'", shown(ps))
				       : fail(ps, "expected a key");
	*out = dup_n(ps, s, ps->p - s);
	return *out ? 0 : -1;
}

static bool digit(char ch)
{
	return ch >= '0' && ch <= '9';
}

/* Digits with single '_' between them (TOML), copied without the '_'; 0 or -1. */
static int digits(struct parser *ps, char **o)
{
	if (ps->p == ps->end || !digit(*ps->p))
		return -1;
	while (ps->p < ps->end && (digit(*ps->p) || *ps->p == '_')) {
		if (*ps->p == '_' && (ps->p + 1 == ps->end || !digit(ps->p[1])))
			return -1;
		if (*ps->p != '_')
			*(*o)++ = *ps->p;
		ps->p++;
	}
	return 0;
}

/* A decimal integer or a decimal with a fraction; TOML's other forms are refused by name. */
static int parse_number(struct parser *ps, struct vk_conf_kv *kv)
{
	const char *s = ps->p;
	char *buf = malloc(ps->end - ps->p + 1), *o = buf;

	if (!buf)
		return fail(ps, "out of memory");
	if (*ps->p == '-')
		*o++ = *ps->p++;
	else if (*ps->p == '+')		/* +5 is 5 */
		ps->p++;
	if (ps->end - ps->p >= 2 && ps->p[0] == '0' && strchr("xob", ps->p[1])) {
		free(buf);
		return fail(ps, "only decimal numbers are supported here");
	}
	if (ps->end - ps->p >= 3 && (!strncmp(ps->p, "inf", 3) || !strncmp(ps->p, "nan", 3))) {
		free(buf);
		return fail(ps, "inf and nan are not supported here");
	}
	if (ps->p < ps->end && *ps->p == '0' && ps->p + 1 < ps->end && (digit(ps->p[1]) || ps->p[1] == '_')) {
		free(buf);
		return fail(ps, "a number may not start with 0 in TOML: '%.*s'",
			    cut(s, strcspn(s, " \t#\r\n") > 20 ? 20 : strcspn(s, " \t#\r\n")), s);
	}
	kv->type = VK_CONF_INT;
	if (digits(ps, &o))
		goto bad;
	if (ps->p < ps->end && *ps->p == '.') {
		*o++ = *ps->p++;
		kv->type = VK_CONF_REAL;
		if (digits(ps, &o))
			goto bad;
	}
	if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
		free(buf);
		return fail(ps, "exponents are not supported here: write the number out");
	}
	if (ps->p < ps->end && (digit(*ps->p) || *ps->p == '-' || *ps->p == ':')) {
		free(buf);
		return fail(ps, "dates and times are not supported here");
	}
	*o = '\0';
	kv->text = buf;
	return 0;
bad:
	free(buf);
	ps->p = s;
	return fail(ps, "'%.*s' is not a TOML number",
		    cut(s, strcspn(s, " \t#\r\n") > 40 ? 40 : strcspn(s, " \t#\r\n")), s);
}

/* ["a", "b"]: strings only, on one line, a trailing comma allowed. */
static int parse_array(struct parser *ps, struct vk_conf_kv *kv)
{
	char **strs = NULL, *s;
	int n = 0;

	ps->p++;
	for (;;) {
		skip_ws(ps);
		if (ps->p == ps->end || *ps->p == '#')
			goto unclosed;
		if (*ps->p == ']')
			break;
		if (*ps->p != '"' && *ps->p != '\'') {
			kv->strs = strs;
			kv->nstrs = n;
			return fail(ps, "only arrays of strings are supported here");
		}
		if (parse_string(ps, &s))
			goto out;
		strs = realloc(strs, (n + 1) * sizeof(*strs));
		if (!strs) {
			free(s);
			return fail(ps, "out of memory");
		}
		strs[n++] = s;
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == ']')
			break;
		goto unclosed;
	}
	ps->p++;
	kv->type = VK_CONF_STRS;
	kv->strs = strs;
	kv->nstrs = n;
	return 0;
unclosed:
	fail(ps, "an array must close on its line, its strings separated by ','");
out:
	kv->strs = strs;
	kv->nstrs = n;
	return -1;
}

static int parse_value(struct parser *ps, struct vk_conf_kv *kv)
{
	const char *s = ps->p;

	if (ps->p == ps->end || *ps->p == '#')
		return fail(ps, "'%s' has no value", kv->key);
	if (*ps->p == '"' || *ps->p == '\'') {
		kv->type = VK_CONF_STR;
		return parse_string(ps, &kv->text);
	}
	if (*ps->p == '[')
		return parse_array(ps, kv);
	if (*ps->p == '{')
		return fail(ps, "inline tables are not supported here: use a [table]");
	if (*ps->p == '+' || *ps->p == '-' || digit(*ps->p) ||
	    (ps->end - ps->p >= 3 && (!strncmp(ps->p, "inf", 3) || !strncmp(ps->p, "nan", 3))))
		return parse_number(ps, kv);
	while (ps->p < ps->end && is_bare(*ps->p))
		ps->p++;
	if ((ps->p - s == 4 && !strncmp(s, "true", 4)) || (ps->p - s == 5 && !strncmp(s, "false", 5))) {
		kv->type = VK_CONF_BOOL;
		kv->text = dup_n(ps, s, ps->p - s);
		return kv->text ? 0 : -1;
	}
	ps->p = s;
	return fail(ps, "'%.*s' is not a value (a string is written in quotes)",
		    cut(s, strcspn(s, " \t#\r\n") > 40 ? 40 : strcspn(s, " \t#\r\n")), s);
}

static bool same_path(const struct vk_conf_table *t, char **path, int depth)
{
	if (t->depth != depth)
		return false;
	for (int i = 0; i < depth; i++)
		if (strcmp(t->path[i], path[i]))
			return false;
	return true;
}

/* The last table with this path (the open element of an array), or NULL. */
static struct vk_conf_table *find_table(struct vk_conf *c, char **path, int depth)
{
	for (int i = c->nt - 1; i >= 0; i--)
		if (same_path(&c->t[i], path, depth))
			return &c->t[i];
	return NULL;
}

static bool has_key(const struct vk_conf_table *t, const char *key)
{
	for (int i = 0; i < t->nkv; i++)
		if (!strcmp(t->kv[i].key, key))
			return true;
	return false;
}

static struct vk_conf_table *add_table(struct parser *ps, char **path, int depth, bool array,
				       bool implicit)
{
	struct vk_conf *c = ps->c;
	struct vk_conf_table *t = realloc(c->t, (c->nt + 1) * sizeof(*t));

	if (!t) {
		fail(ps, "out of memory");
		return NULL;
	}
	c->t = t;
	t = &c->t[c->nt++];
	memset(t, 0, sizeof(*t));
	for (int i = 0; i < depth; i++) {
		t->path[i] = strdup(path[i]);
		if (!t->path[i]) {
			fail(ps, "out of memory");
			return NULL;
		}
		t->depth = i + 1;
	}
	t->array = array;
	t->implicit = implicit;
	t->line = ps->line;
	return t;
}

/* "[a.b]" as written, for messages, in buf (160 bytes). */
static const char *path_str(char *buf, char **path, int depth, bool array)
{
	size_t n = 0;

	n += snprintf(buf + n, 160 - n, "%s", array ? "[[" : "[");
	for (int i = 0; i < depth && n < 160; i++)
		n += snprintf(buf + n, 160 - n, "%s%s", i ? "." : "", path[i]);
	if (n < 160)
		snprintf(buf + n, 160 - n, "%s", array ? "]]" : "]");
	return buf;
}

/* Open [path] or [[path]], with TOML's rules on what may be defined twice. */
static int open_table(struct parser *ps, char **path, int depth, bool array)
{
	char p1[160], p2[160];
	struct vk_conf_table *t;

	for (int k = 0; k < depth; k++) {
		struct vk_conf_table *parent = find_table(ps->c, path, k);

		if (parent && has_key(parent, path[k]))
			return fail(ps, "%s: '%s' is already a key of %s",
				    path_str(p1, path, depth, array), path[k],
				    k ? path_str(p2, path, k, false) : "the top level");
		if (k && parent && parent->array)
			return fail(ps, "tables under an array of tables are not supported here");
		if (k && !parent && !add_table(ps, path, k, false, true))
			return -1;
	}
	t = find_table(ps->c, path, depth);
	if (t && (t->array != array))
		return fail(ps, "%s: '%s' is already defined as %s (line %d)",
			    path_str(p1, path, depth, array), path[depth - 1],
			    t->array ? "an array of tables" : "a table", t->line);
	if (t && !array && !t->implicit)
		return fail(ps, "%s is defined twice (first at line %d)",
			    path_str(p1, path, depth, array), t->line);
	if (t && !array) {
		t->implicit = false;	/* [a.b] then [a]: TOML allows defining [a] once */
		t->line = ps->line;
		ps->cur = t;
		return 0;
	}
	ps->cur = add_table(ps, path, depth, array, false);
	return ps->cur ? 0 : -1;
}

static int parse_header(struct parser *ps)
{
	char *path[VK_CONF_MAX_DEPTH + 1] = {};
	bool array = ps->end - ps->p >= 2 && ps->p[1] == '[';
	int depth = 0, ret = -1;

	ps->p += array ? 2 : 1;
	for (;;) {
		skip_ws(ps);
		if (depth == VK_CONF_MAX_DEPTH) {
			fail(ps, "tables nest at most %d deep here", VK_CONF_MAX_DEPTH);
			goto out;
		}
		if (parse_key(ps, &path[depth]))
			goto out;
		depth++;
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == '.') {
			ps->p++;
			continue;
		}
		break;
	}
	if (ps->p == ps->end || *ps->p != ']' ||
	    (array && (ps->end - ps->p < 2 || ps->p[1] != ']'))) {
		fail(ps, "a table header must end with '%s'", array ? "]]" : "]");
		goto out;
	}
	ps->p += array ? 2 : 1;
	if (expect_eol(ps, "a table header"))
		goto out;
	ret = open_table(ps, path, depth, array);
out:
	for (int i = 0; i < depth; i++)
		free(path[i]);
	return ret;
}

static int parse_kv(struct parser *ps)
{
	struct vk_conf_table *t = ps->cur;
	struct vk_conf_kv kv = { .line = ps->line };
	char *sub[VK_CONF_MAX_DEPTH + 1];

	if (parse_key(ps, &kv.key))
		return -1;
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == '.') {
		free(kv.key);
		return fail(ps, "dotted keys are not supported here: use a [table]");
	}
	if (ps->p == ps->end || *ps->p != '=') {
		fail(ps, "expected '=' after '%s'", kv.key);
		free(kv.key);
		return -1;
	}
	ps->p++;
	skip_ws(ps);
	if (has_key(t, kv.key)) {
		fail(ps, "'%s' is defined twice in this table", kv.key);
		free(kv.key);
		return -1;
	}
	/* a key named like a table already made under this one */
	for (int i = 0; i < t->depth; i++)
		sub[i] = t->path[i];
	sub[t->depth] = kv.key;
	if (t->depth < VK_CONF_MAX_DEPTH && find_table(ps->c, sub, t->depth + 1)) {
		fail(ps, "'%s' is already a table", kv.key);
		free(kv.key);
		return -1;
	}
	if (parse_value(ps, &kv) || expect_eol(ps, "a value")) {
		free(kv.key);
		free(kv.text);
		for (int i = 0; i < kv.nstrs; i++)
			free(kv.strs[i]);
		free(kv.strs);
		return -1;
	}
	t->kv = realloc(t->kv, (t->nkv + 1) * sizeof(*t->kv));
	if (!t->kv)
		return fail(ps, "out of memory");
	t->kv[t->nkv++] = kv;
	return 0;
}

int vk_conf_parse(const char *name, const char *text, unsigned long len, struct vk_conf *c,
		  char *err)
{
	struct parser ps = { .name = name, .err = err, .c = c };
	const char *s = text, *end = text + len;
	unsigned long bad;

	memset(c, 0, sizeof(*c));
	if (text[len] != '\0')		/* the scanners stop at the terminator at the latest */
		return vk_err(err, "%s: internal error: text not terminated", name);
	if (memchr(text, '\0', len))
		return vk_err(err, "%s: a NUL byte: this is not a text file", name);
	bad = bad_utf8((const unsigned char *)text, len);
	if (bad) {
		ps.line = 1;
		for (const char *q = text; q < text + bad - 1; q++)
			ps.line += *q == '\n';
		return fail(&ps, "not UTF-8 (TOML files are)");
	}
	ps.cur = add_table(&ps, NULL, 0, false, false);
	if (!ps.cur)
		return -1;
	while (s < end) {
		const char *nl = memchr(s, '\n', end - s);
		const char *eol = nl ? nl : end;

		ps.line++;
		if (nl && eol > s && eol[-1] == '\r')	/* CRLF; a lone CR is a control character */
			eol--;
		for (const char *q = s; q < eol; q++)
			if (((unsigned char)*q < 0x20 && *q != '\t') || *q == 0x7f)
				return fail(&ps, "a control character (0x%02x): TOML does not allow it",
					    (unsigned char)*q);
		ps.p = s;
		ps.end = eol;
		skip_ws(&ps);
		if (ps.p < ps.end && *ps.p != '#' &&
		    (*ps.p == '[' ? parse_header(&ps) : parse_kv(&ps)))
			return -1;
		s = nl ? nl + 1 : end;
	}
	return 0;
}

int vk_conf_read(const char *file, struct vk_conf *c, char *err)
{
	FILE *f = fopen(file, "r");
	char *buf;
	size_t n;
	int ret;

	memset(c, 0, sizeof(*c));
	if (!f)
		return vk_err(err, "cannot open %s: %s", file, strerror(errno));
	buf = malloc(VK_CONF_MAX_BYTES + 1);
	if (!buf) {
		fclose(f);
		return vk_err(err, "out of memory");
	}
	n = fread(buf, 1, VK_CONF_MAX_BYTES + 1, f);
	if (ferror(f)) {
		ret = vk_err(err, "cannot read %s: %s", file, strerror(errno));
	} else if (n > VK_CONF_MAX_BYTES) {
		ret = vk_err(err, "%s is larger than %u bytes: not a vegaskit configuration", file,
			     VK_CONF_MAX_BYTES);
	} else {
		buf[n] = '\0';	/* the parser's strcspn stops here at the latest */
		ret = vk_conf_parse(file, buf, n, c, err);
	}
	free(buf);
	fclose(f);
	return ret;
}

void vk_conf_free(struct vk_conf *c)
{
	for (int i = 0; i < c->nt; i++) {
		struct vk_conf_table *t = &c->t[i];

		for (int k = 0; k < t->depth; k++)
			free(t->path[k]);
		for (int k = 0; k < t->nkv; k++) {
			free(t->kv[k].key);
			free(t->kv[k].text);
			for (int j = 0; j < t->kv[k].nstrs; j++)
				free(t->kv[k].strs[j]);
			free(t->kv[k].strs);
		}
		free(t->kv);
	}
	free(c->t);
	memset(c, 0, sizeof(*c));
}

void vk_conf_print_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch == '\n')
			fputs("\\n", f);
		else if (ch == '\t')
			fputs("\\t", f);
		else if (ch < 0x20 || ch == 0x7f)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}
