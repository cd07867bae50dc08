// SPDX-License-Identifier: GPL-2.0
/* The trace lease and the registry of live readers (tracelease.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "cli.h"
#include "env.h"
#include "instance.h"
#include "tracelease.h"
#include "../bpf/vk_intf.h"

#define TRACE_MASK	VK_TRACE_BITS

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

static bool lease_current(void)
{
	__u32 zero = 0;
	__u64 until = 0;
	int fd = vk_lease_open();

	if (fd < 0)
		return false;
	if (bpf_map_lookup_elem(fd, &zero, &until))
		until = 0;
	close(fd);
	return until > now_ns();
}

/* What the live readers want: trace bits per instance name. */
struct claims {
	struct claim {
		char name[VK_NAME_MAX];
		__u32 bits;
	} *v;
	int n, cap;
};

/* 0, or -1 if out of memory (the claim is not recorded). */
static int claim_add(struct claims *c, const char *name, __u32 bits)
{
	for (int i = 0; i < c->n; i++)
		if (!strcmp(c->v[i].name, name)) {
			c->v[i].bits |= bits;
			return 0;
		}
	if (c->n == c->cap) {
		int cap = c->cap ? 2 * c->cap : 16;
		struct claim *v = realloc(c->v, cap * sizeof(*v));

		if (!v)
			return -1;
		c->v = v;
		c->cap = cap;
	}
	snprintf(c->v[c->n].name, VK_NAME_MAX, "%s", name);
	c->v[c->n++].bits = bits;
	return 0;
}

static __u32 claimed(const struct claims *c, const char *name)
{
	for (int i = 0; i < c->n; i++)
		if (!strcmp(c->v[i].name, name))
			return c->v[i].bits;
	return 0;
}

/* A registry file's lines, "BITS NAME", into c; -1 if some could not be read. */
static int read_claims(int fd, struct claims *c)
{
	char line[VK_NAME_MAX + 16], *end;
	FILE *f;
	int dfd = dup(fd), ret = 0;

	if (dfd < 0 || !(f = fdopen(dfd, "r"))) {
		if (dfd >= 0)
			close(dfd);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long bits = strtoul(line, &end, 10);
		size_t len;

		if (end == line || *end++ != ' ')
			continue;
		len = strcspn(end, "\n");
		end[len] = 0;
		if (len && len < VK_NAME_MAX && !(bits & ~TRACE_MASK) && claim_add(c, end, (__u32)bits))
			ret = -1;
	}
	if (ferror(f))
		ret = -1;
	fclose(f);
	return ret;
}

/*
 * Each live reader's claims into live; returns how many live readers there
 * are, or -1 if any file's state or claims could not be told (then live is
 * incomplete and nothing may be switched off on its word). With sweep, under
 * the state lock, a file whose flock can be taken is a dead reader's and goes;
 * a starting reader creates and locks its file under that lock too, so none is
 * caught half made.
 */
static int scan(struct claims *live, bool sweep)
{
	DIR *d;
	struct dirent *e;
	int n = 0;

	if (vk_pin_dir_check(VK_TRACE_REG, (char[VK_ERR_MAX]){ 0 }))
		return -1;
	if (!(d = opendir(VK_TRACE_REG)))
		return errno == ENOENT ? 0 : -1;
	while (n >= 0 && (errno = 0, e = readdir(d))) {
		struct stat st;
		int fd;

		if (e->d_name[0] == '.')
			continue;
		fd = openat(dirfd(d), e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0) {
			if (errno != ENOENT)	/* ENOENT: its reader has just left */
				n = -1;
			continue;
		}
		/* sweep: exclusive, as it removes; show: shared, so two shows do not
		 * take each other for dead readers. Not root's regular file: not a
		 * reader's, ignored. */
		if (fstat(fd, &st)) {
			n = -1;
		} else if (!S_ISREG(st.st_mode) || st.st_uid != 0) {
			;
		} else if (flock(fd, (sweep ? LOCK_EX : LOCK_SH) | LOCK_NB) == 0) {
			if (sweep)
				unlinkat(dirfd(d), e->d_name, 0);
		} else if (errno == EWOULDBLOCK) {
			n = read_claims(fd, live) ? -1 : n + 1;
		} else {
			n = -1;		/* alive or dead, we cannot tell */
		}
		close(fd);
	}
	if (!e && errno)
		n = -1;
	closedir(d);
	return n;
}

bool vk_tracing_live(const char *name, __u32 bits)
{
	struct claims live = { 0 };
	bool on;

	if (!bits || !lease_current())
		return false;
	on = scan(&live, false) >= 0 && claimed(&live, name) != 0;
	free(live.v);
	return on;
}

/*
 * Under the state lock: remove dead readers' files, then give every instance
 * the union of the bits live readers claim for it; a bit no one claims goes
 * off, whoever set it. If a reader's state or claims cannot be read, change no
 * bits (a live reader's must not go off): -1.
 */
static int reconcile(void)
{
	struct claims live = { 0 };
	char (*names)[VK_NAME_MAX] = NULL;
	int n;

	if (scan(&live, true) < 0) {
		free(live.v);
		return -1;
	}
	n = vk_instance_names(&names);
	for (int i = 0; i < n; i++) {
		char err[VK_ERR_MAX];
		struct vk_instance in;
		__u32 want = claimed(&live, names[i]);

		if (vk_instance_read(names[i], &in, err) || !in.has_params || in.other_version ||
		    (in.params.trace & TRACE_MASK) == want)
			continue;
		in.params.trace = (in.params.trace & ~TRACE_MASK) | want;
		vk_instance_write_params(names[i], &in.params, err);
	}
	free(names);
	free(live.v);
	return 0;
}

static int own_fd = -1;		/* our registry file, flock'd till we exit or die */
static char own_path[PATH_MAX];

/* The registry directory: made root's 0700, or refused if someone else's. */
static int reg_dir(char *err)
{
	if (mkdir(VK_TRACE_REG, 0700) && errno != EEXIST)
		return vk_err(err, "cannot create %s: %s", VK_TRACE_REG, strerror(errno));
	return vk_pin_dir_check(VK_TRACE_REG, err);
}

static int reg_create(char (*names)[VK_NAME_MAX], int n, __u32 bits, char *err)
{
	unsigned int r = 0;
	FILE *f;
	int fd = -1, dfd;

	for (int tries = 0; fd < 0 && tries < 8; tries++) {
		/* the random part: a pid reused after a crash must not collide */
		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			r ^= (unsigned int)now_ns();
		snprintf(own_path, sizeof(own_path), VK_TRACE_REG "/%d.%08x", (int)getpid(), r);
		fd = open(own_path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0)
		return vk_err(err, "cannot create a reader file in %s: %s", VK_TRACE_REG, strerror(errno));
	if (flock(fd, LOCK_EX)) {
		vk_err(err, "cannot lock %s: %s", own_path, strerror(errno));
		goto fail;
	}
	dfd = dup(fd);
	if (dfd < 0 || !(f = fdopen(dfd, "w"))) {
		vk_err(err, "cannot write %s: %s", own_path, strerror(errno));
		if (dfd >= 0)
			close(dfd);
		goto fail;
	}
	for (int i = 0; i < n; i++)
		fprintf(f, "%u %s\n", bits, names[i]);
	if (fclose(f)) {
		vk_err(err, "cannot write %s: %s", own_path, strerror(errno));
		goto fail;
	}
	own_fd = fd;
	return 0;
fail:
	unlink(own_path);
	close(fd);
	return -1;
}

int vk_reg_start(char (*names)[VK_NAME_MAX], int n, __u32 bits, void (*drain)(void *),
		 void *arg, char *err)
{
	struct claims live = { 0 };
	int lk = vk_lock_fd(true, err), done = 0, others;

	if (lk < 0)
		return -1;
	if (reg_dir(err)) {
		close(lk);
		return -1;
	}
	/* Under the lock no reader starts or sets bits meanwhile: if no live reader
	 * claims one of our instances, what their rings hold is a dead reader's; else
	 * it is a live one's unread (each instance has its own ring, instance.h). */
	others = scan(&live, false);
	for (int i = 0; others > 0 && i < n; i++)
		if (claimed(&live, names[i]))
			others = -1;
	free(live.v);
	if (others >= 0 && drain)
		drain(arg);
	if (reg_create(names, n, bits, err)) {
		close(lk);
		return -1;
	}
	if (reconcile()) {	/* also clears what dead readers left on */
		vk_err(err, "cannot tell which readers in %s are alive (out of memory or files?)",
		       VK_TRACE_REG);
		close(lk);
		vk_reg_stop();
		return -1;
	}
	for (int i = 0; i < n; i++) {
		struct vk_instance in;

		if (vk_instance_read(names[i], &in, err))
			continue;
		if (in.has_params && !in.other_version && (in.params.trace & bits) == bits)
			done++;
		else	/* unloaded or replaced since it was found traceable */
			vk_err(err, "'%s' has no readable parameters any more", names[i]);
	}
	close(lk);
	return done;
}

void vk_reg_sweep(void)
{
	/* a long load holds it: try again next time */
	int lk = vk_lock_fd(false, (char[VK_ERR_MAX]){ 0 });

	if (lk < 0)
		return;
	reconcile();
	close(lk);
}

void vk_reg_stop(void)
{
	int lk;

	if (own_fd < 0)
		return;
	lk = vk_lock_fd(true, (char[VK_ERR_MAX]){ 0 });
	unlink(own_path);
	if (lk >= 0) {
		reconcile();
		close(lk);
	}
	close(own_fd);
	own_fd = -1;
}
