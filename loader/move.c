// SPDX-License-Identifier: GPL-2.0
/* The namespace default and the walk that moves established sockets (move.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "bpfobj.h"
#include "cli.h"
#include "embed.h"
#include "iter.h"
#include "filter.h"
#include "move.h"
#include "netns.h"

VK_EMBED(vk_swap_iter)

int vk_default_read(char *buf, size_t n)
{
	FILE *f = fopen(VK_DEFAULT_CC, "r");

	if (!f || !fgets(buf, (int)n, f)) {
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

int vk_default_write(const char *name)
{
	int fd = open(VK_DEFAULT_CC, O_WRONLY);
	ssize_t w;

	if (fd < 0)
		return -1;
	w = write(fd, name, strlen(name));
	close(fd);
	return w == (ssize_t)strlen(name) ? 0 : -1;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int count(const void *rec, void *arg)
{
	const struct vk_swap_rec *r = rec;
	struct vk_move_counts *c = arg;

	if (r->result == VK_SWAP_UPGRADED)
		c->upgraded++;
	if (r->result == VK_SWAP_MOVED || r->result == VK_SWAP_UPGRADED)
		c->moved++;
	else if (r->result == VK_SWAP_ALREADY)
		c->already++;
	else if (!c->failed++)
		c->first_err = r->err;
	return 0;
}

int vk_move_established(const struct vk_swap_cfg *cfg, struct vk_move_counts *c, char *err)
{
	struct bpf_object *obj;
	struct bpf_link *link = NULL;
	struct vk_swap_cfg *rw;
	char why[VK_ERR_MAX] = "";
	int ret = -1;
	double t0;

	obj = vk_iter_open("vk_swap_iter", vk_swap_iter_elf_bytes, NULL, err);
	if (!obj)
		return -1;
	rw = vk_obj_global(obj, ".data", "cfg", sizeof(*rw));
	if (!rw) {
		vk_err(err, "embedded swap iterator is malformed (build mismatch)");
		goto out;
	}
	*rw = *cfg;
	if (vk_iter_load(obj, why)) {
		vk_err(err, "cannot load the swap iterator: %s (Linux >= 5.15 is needed for bpf_setsockopt from iter/tcp)", why);
		goto out;
	}
	t0 = now_ms();
	link = vk_iter_attach(obj, "vk_swap", NULL, "swap", err);
	if (link)
		ret = vk_iter_each(link, sizeof(struct vk_swap_rec), count, c, "swap", err);
	c->ms = now_ms() - t0;
out:
	bpf_link__destroy(link);
	bpf_object__close(obj);
	return ret;
}


struct on_walk {
	struct vk_swap_cfg cfg;
	unsigned n;
	char *err;
};

static int count_on(__u32 inum, void *arg)
{
	struct on_walk *w = arg;
	struct vk_move_counts c = {};
	(void)inum;

	if (vk_move_established(&w->cfg, &c, w->err))
		return -1;
	w->n += c.already;	/* count_only: on the target's name is "already" */
	return 0;
}

int vk_sockets_on(const char *name, unsigned *n, char *err)
{
	struct on_walk w = { .err = err };

	vk_filter_init(&w.cfg.filter);
	snprintf(w.cfg.target, sizeof(w.cfg.target), "%s", name);
	w.cfg.count_only = 1;
	if (vk_filter_controller(&w.cfg.filter, name, err) || vk_netns_each(count_on, &w, err))
		return -1;
	*n = w.n;
	return 0;
}
