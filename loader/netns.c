// SPDX-License-Identifier: GPL-2.0
/* Entering network namespaces and visiting all of them (netns.h). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "netns.h"
#include "cli.h"

int vk_netns_path(const char *name, char *path, size_t n, char *err)
{
	size_t len = strlen(name);

	if (!len || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return vk_err(err, "bad namespace name '%s': an `ip netns` name has no '/' and is "
			      "not empty, '.' or '..'", name);
	if (len > NAME_MAX)	/* a longer name would be cut to some other file's */
		return vk_err(err, "namespace name '%.40s...' is longer than %d characters: "
			      "no `ip netns` name is", name, NAME_MAX);
	snprintf(path, n, "%s/%s", VK_NETNS_RUN, name);
	return 0;
}

int vk_netns_enter_named(const char *name, char *err)
{
	char path[VK_NETNS_PATH_MAX];
	int fd;

	if (vk_netns_path(name, path, sizeof(path), err))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET)) {
		snprintf(err, VK_ERR_MAX, "cannot enter network namespace '%s': %s", name,
			 strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

int vk_netns_in(const char *name, int (*fn)(void *arg), void *arg, char *err)
{
	int home, ret;

	if (!name)
		return fn(arg);
	home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (home < 0)
		return vk_err(err, "cannot open this network namespace: %s", strerror(errno));
	if (vk_netns_enter_named(name, err)) {
		close(home);
		return -1;
	}
	ret = fn(arg);
	if (setns(home, CLONE_NEWNET)) {
		vk_err(err, "cannot return to the original network namespace: %s", strerror(errno));
		ret = -1;
	}
	close(home);
	return ret;
}

struct walk {
	vk_netns_fn fn;
	void *arg;
	int home;		/* fd of the caller's namespace */
	__u32 *seen;		/* inodes already visited */
	size_t nseen, cap;
	int stop;		/* fn's non-zero return, or -1 on a setns failure */
	char *err;
};

static bool seen(const struct walk *w, __u32 inum)
{
	for (size_t i = 0; i < w->nseen; i++)
		if (w->seen[i] == inum)
			return true;
	return false;
}

/* Remember a visited namespace; 0, or -1 when out of memory (the walk stops). */
static int mark_seen(struct walk *w, __u32 inum)
{
	if (w->nseen == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 64;
		__u32 *s = realloc(w->seen, cap * sizeof(*s));

		if (!s)
			return -1;
		w->seen = s;
		w->cap = cap;
	}
	w->seen[w->nseen++] = inum;
	return 0;
}

/* Visit the namespace at path (a /proc ns link or an nsfs mount) if new. */
static void visit(struct walk *w, const char *path)
{
	struct stat st;
	int fd;

	if (w->stop || stat(path, &st) || seen(w, (__u32)st.st_ino))
		return;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;		/* the task exited, or not a namespace we may open */
	/* What was opened, not what was stat()ed: the task may have changed since. */
	if (fstat(fd, &st) || seen(w, (__u32)st.st_ino) || setns(fd, CLONE_NEWNET)) {
		close(fd);	/* seen, or an nsfs mount of another namespace type */
		return;
	}
	close(fd);
	if (mark_seen(w, (__u32)st.st_ino)) {
		snprintf(w->err, VK_ERR_MAX, "out of memory walking network namespaces");
		w->stop = -1;
	} else {
		w->stop = w->fn((__u32)st.st_ino, w->arg);
	}
	if (setns(w->home, CLONE_NEWNET)) {
		snprintf(w->err, VK_ERR_MAX, "cannot return to the original network namespace: %s",
			 strerror(errno));
		w->stop = -1;
	}
}

/* Every thread's namespace: threads may setns on their own. */
static void visit_tasks(struct walk *w)
{
	DIR *proc = opendir("/proc"), *tasks;
	struct dirent *p, *t;
	char path[64];

	if (!proc)
		return;
	while (!w->stop && (p = readdir(proc))) {
		if (p->d_name[0] < '0' || p->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%.16s/task", p->d_name);
		tasks = opendir(path);
		if (!tasks)
			continue;
		while (!w->stop && (t = readdir(tasks))) {
			if (t->d_name[0] < '0' || t->d_name[0] > '9')
				continue;
			snprintf(path, sizeof(path), "/proc/%.16s/task/%.16s/ns/net", p->d_name,
				 t->d_name);
			visit(w, path);
		}
		closedir(tasks);
	}
	closedir(proc);
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++, o++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o = *s;
		}
	}
	*o = '\0';
}

/* Namespaces kept by bind mounts (ip netns, container runtimes) with no task. */
static void visit_mounts(struct walk *w)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char *line = NULL, root[256], point[4096];
	size_t n = 0;

	if (!f)
		return;
	while (!w->stop && getline(&line, &n, f) > 0) {
		char *sep = strstr(line, " - nsfs ");

		if (!sep || sscanf(line, "%*s %*s %*s %255s %4095s", root, point) != 2 ||
		    strncmp(root, "net:[", 5))
			continue;
		unescape(point);
		visit(w, point);
	}
	free(line);
	fclose(f);
}

int vk_netns_each(vk_netns_fn fn, void *arg, char *err)
{
	struct walk w = { .fn = fn, .arg = arg, .err = err };

	w.home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (w.home < 0) {
		snprintf(err, VK_ERR_MAX, "cannot open this process's network namespace: %s",
			 strerror(errno));
		return -1;
	}
	visit(&w, "/proc/self/ns/net");
	visit_tasks(&w);
	visit_mounts(&w);
	close(w.home);
	free(w.seen);
	return w.stop;
}
