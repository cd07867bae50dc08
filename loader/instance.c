// SPDX-License-Identifier: GPL-2.0
/*
 * Registered instances: load, replace, read, retune and unload, each a
 * sequence of pin operations ordered so that a crash at any step leaves a
 * state `list` reports truthfully and `unload` removes (instance.h,
 * docs/DESIGN.md §4).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "bpfobj.h"
#include "cli.h"
#include "env.h"
#include "fault.h"
#include "instance.h"
#include "names.h"

#define PIN_PATH_MAX	300

/* Maps every controller shares, pinned by name (LIBBPF_PIN_BY_NAME). */
static const char *const vk_shared_pins[] = {
	VK_PIN_FLOWS, VK_PIN_TRACE_LOST, VK_PIN_TRACE_UNTIL,
};

/*
 * Maps each instance has of its own, pinned in its directory and carried over by a
 * replacement (reuse_own): its counters, so that metrics stay monotonic across an
 * upgrade, and its trace ring, so that a reader of one instance never consumes
 * another's records and a live reader keeps reading across a replace
 * (docs/DESIGN.md §5.1).
 */
static const struct {
	const char *map, *leaf;
} vk_own_pins[] = {
	{ "vk_stats", VK_LEAF_STATS },
	{ "vk_events", VK_LEAF_EVENTS },
};

#define VK_NR_OWN_PINS	(sizeof(vk_own_pins) / sizeof(vk_own_pins[0]))

static struct bpf_object *open_variant(const struct vk_variant_desc *v, char *err)
{
	return vk_open_embedded(v->ca_name, v->elf_bytes, err);
}

static struct bpf_map *params_map(struct bpf_object *obj)
{
	return bpf_object__find_map_by_name(obj, ".data.params");
}

/*
 * The object's two struct_ops maps (bpf/vk_common.bpf.h): vk_ops, two calls per
 * ACK, and vk_ops_one, one. Only the one `calls` names is created, and only its
 * programs loaded (vk2_* are vk_ops's alone, vk1_* vk_ops_one's).
 */
static struct bpf_map *ops_map(struct bpf_object *obj, __u32 calls)
{
	const char *skip = calls == 1 ? "vk2_" : "vk1_";
	struct bpf_map *m, *ops = NULL;
	struct bpf_program *prog;

	bpf_object__for_each_map(m, obj) {
		if (bpf_map__type(m) != BPF_MAP_TYPE_STRUCT_OPS)
			continue;
		if (!strcmp(bpf_map__name(m), calls == 1 ? "vk_ops_one" : "vk_ops"))
			ops = m;
		else if (bpf_map__set_autocreate(m, false))
			return NULL;
	}
	bpf_object__for_each_program(prog, obj)
		if (!strncmp(bpf_program__name(prog), skip, strlen(skip)) &&
		    bpf_program__set_autoload(prog, false))
			return NULL;
	return ops;
}

int vk_default_params(const struct vk_variant_desc *v, struct vk_params *p, char *err)
{
	struct bpf_object *obj = open_variant(v, err);
	const void *init;
	size_t sz = 0;

	if (!obj)
		return -1;
	init = params_map(obj) ? bpf_map__initial_value(params_map(obj), &sz) : NULL;
	if (!init || sz != sizeof(*p)) {
		bpf_object__close(obj);
		return vk_err(err, "embedded %s object has no vk_params (build mismatch)", v->name);
	}
	memcpy(p, init, sizeof(*p));
	bpf_object__close(obj);
	return 0;
}

/* Byte offset of a member of struct tcp_congestion_ops, from the object's BTF. */
static int ops_member_offset(struct bpf_object *obj, const char *member)
{
	const struct btf *btf = bpf_object__btf(obj);
	const struct btf_type *t;
	const struct btf_member *m;
	int id;

	id = btf ? btf__find_by_name_kind(btf, "tcp_congestion_ops", BTF_KIND_STRUCT) : -1;
	if (id <= 0)
		return -1;
	t = btf__type_by_id(btf, id);
	m = btf_members(t);
	for (int i = 0; i < btf_vlen(t); i++, m++)
		if (!strcmp(btf__name_by_offset(btf, m->name_off), member))
			return btf_member_bit_offset(t, i) / 8;
	return -1;
}

static void path_of(char *buf, const char *name, const char *leaf)
{
	char dir[VK_NAME_MAX];

	vk_name_to_dir(dir, name);
	snprintf(buf, PIN_PATH_MAX, VK_PIN_CC "/%s%s%s", dir, leaf ? "/" : "", leaf ? leaf : "");
}

/* mkdir 0700, or check that what is there is ours alone (env.h). */
static int mkdir_private(const char *path, char *err)
{
	if (mkdir(path, 0700) && errno != EEXIST)
		return vk_err(err, "cannot create %s: %s", path, strerror(errno));
	return vk_pin_dir_check(path, err);
}

/*
 * Remove the shared pins and the root once no instance is left: after an unload or a
 * failed load, and before a load (orphans). `who` names the pause point, as tests stop
 * it there (VEGASCTL_PAUSE_AT).
 */
static void prune_root(const char *who)
{
	if (rmdir(VK_PIN_CC) && errno != ENOENT)
		return;		/* still has instances */
	/* Without the lock (env.c) another load here would reuse pins about to go. */
	vk_pause_point(who);
	for (size_t i = 0; i < sizeof(vk_shared_pins) / sizeof(vk_shared_pins[0]); i++)
		unlink(vk_shared_pins[i]);
	/* the one ring all instances shared before each had its own: an upgrade that
	 * unloads the older version's last instance must not leave it behind */
	unlink(VK_PIN_SHARED "/vk_events");
	rmdir(VK_PIN_SHARED);
	rmdir(VK_PIN_ROOT);
}

/*
 * Remove what an instance pinned besides its link (params, a params_new
 * left by an interrupted replace), then its directory and, if it was the
 * last, the root (who: the pause point, prune_root). Returns rmdir's result, errno
 * intact.
 */
static int remove_pins(const char *name, const char *dir, const char *who)
{
	char pin[PIN_PATH_MAX];
	int ret, e;

	path_of(pin, name, "params");
	unlink(pin);
	path_of(pin, name, "params_new");
	unlink(pin);
	path_of(pin, name, "ops");
	unlink(pin);
	for (size_t i = 0; i < VK_NR_OWN_PINS; i++) {
		path_of(pin, name, vk_own_pins[i].leaf);
		unlink(pin);
	}
	ret = rmdir(dir);
	e = errno;
	prune_root(who);
	errno = e;
	return ret;
}

/* Record in the live params which struct_ops map they belong to. */
static int stamp_ops_map_id(struct bpf_map *params, struct bpf_map *ops)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	struct vk_params p;
	int key = 0;

	if (bpf_map_get_info_by_fd(bpf_map__fd(ops), &info, &len) ||
	    bpf_map_lookup_elem(bpf_map__fd(params), &key, &p))
		return -1;
	p.ops_map_id = info.id;
	return bpf_map_update_elem(bpf_map__fd(params), &key, &p, BPF_ANY);
}

/* Is the map behind fd laid out as m (type, key, value, entries)? */
static bool same_layout(int fd, const struct bpf_map *m)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	return !bpf_map_get_info_by_fd(fd, &info, &len) && info.type == bpf_map__type(m) &&
	       info.key_size == bpf_map__key_size(m) &&
	       info.value_size == bpf_map__value_size(m) &&
	       info.max_entries == bpf_map__max_entries(m);
}

/*
 * A replacement writes into the pinned maps of the code it replaces (old sockets
 * release into them): the instance's own (vk_own_pins). A fresh load has none yet.
 */
static int reuse_own(struct bpf_object *obj, const char *name, char *err)
{
	char pin[PIN_PATH_MAX];
	int ret = 0;

	for (size_t i = 0; i < VK_NR_OWN_PINS && !ret; i++) {
		struct bpf_map *m = bpf_object__find_map_by_name(obj, vk_own_pins[i].map);
		int fd;

		path_of(pin, name, vk_own_pins[i].leaf);
		fd = m ? bpf_obj_get(pin) : -1;
		if (fd < 0)
			continue;
		/* reuse_fd checks nothing: a map of another layout starts afresh instead */
		if (same_layout(fd, m) && bpf_map__reuse_fd(m, fd))
			ret = vk_err(err, "cannot reuse %s: %s", pin, strerror(errno));
		close(fd);
	}
	return ret;
}

/*
 * The maps every instance shares (vk_flows, the trace ring, ...) are pinned by
 * name; an instance of another vegaskit version may have pinned them with
 * another layout (a new rule lengthens struct vk_flow), and libbpf's refusal
 * reads as the kernel refusing the program. Say what it is.
 */
static int check_shared_pins(struct bpf_object *obj, char *err)
{
	struct bpf_map *m;

	bpf_object__for_each_map(m, obj) {
		const char *pin = bpf_map__pin_path(m);
		int fd;

		if (!pin || (fd = bpf_obj_get(pin)) < 0)
			continue;
		if (!same_layout(fd, m)) {
			close(fd);
			return vk_err(err, "%s was pinned by another vegaskit version, with another "
				      "layout: unload that version's controllers first (vegasctl list)",
				      pin);
		}
		close(fd);
	}
	return 0;
}

/*
 * Pin the instance's own maps unless a pin already is this map (a replace that reused
 * it). A fresh load pins before it commits, so a failure fails the load; after a
 * replace's commit a failure cannot undo it, so there it is only a missing counter or
 * ring (replaced says how it went: see vk_instance_replace).
 */
static int pin_own(struct bpf_object *obj, const char *name, char *err)
{
	char pin[PIN_PATH_MAX];

	for (size_t i = 0; i < VK_NR_OWN_PINS; i++) {
		struct bpf_map *m = bpf_object__find_map_by_name(obj, vk_own_pins[i].map);
		struct bpf_map_info a = {}, b = {};
		__u32 la = sizeof(a), lb = sizeof(b);
		int fd;

		if (!m)
			continue;
		path_of(pin, name, vk_own_pins[i].leaf);
		fd = bpf_obj_get(pin);
		if (fd >= 0) {
			bool same = !bpf_map_get_info_by_fd(fd, &a, &la) &&
				    !bpf_map_get_info_by_fd(bpf_map__fd(m), &b, &lb) && a.id == b.id;

			close(fd);
			if (same)
				continue;
			unlink(pin);	/* another layout's: this code starts afresh */
		}
		if (bpf_map__pin(m, pin))
			return vk_err(err, "cannot pin %s: %s", pin, strerror(errno));
	}
	return 0;
}

/*
 * Open the variant's object, name it, give it its parameters and load it into
 * the kernel (not yet registered). Returns the object; *ops and *params get
 * its struct_ops and parameter maps.
 */
static struct bpf_object *prepare(const struct vk_variant_desc *v, const char *name,
				  const struct vk_params *p, bool by_map, struct bpf_map **ops,
				  struct bpf_map **params, char *err)
{
	struct bpf_object *obj = open_variant(v, err);
	int name_off, flags_off;
	size_t sz = 0;
	char *data;

	if (!obj)
		return NULL;
	if (p->calls == 1 && !vk_one_call_supported()) {
		vk_err(err, "calls=1 needs cong_control with the ACK's flags (Linux >= 6.10), "
		       "which this kernel lacks: load with calls=2");
		goto fail;
	}
	*params = params_map(obj);
	*ops = ops_map(obj, p->calls);
	data = *ops ? bpf_map__initial_value(*ops, &sz) : NULL;
	name_off = ops_member_offset(obj, "name");
	flags_off = ops_member_offset(obj, "flags");
	if (!*params || !data || name_off < 0 || flags_off < 0 || (size_t)name_off + VK_NAME_MAX > sz) {
		vk_err(err, "embedded %s object is malformed (build mismatch)", v->name);
		goto fail;
	}
	memset(data + name_off, 0, VK_NAME_MAX);
	memcpy(data + name_off, name, strlen(name));
	memcpy(data + flags_off, &p->ca_flags, sizeof(__u32));
	if (bpf_map__set_initial_value(*params, p, sizeof(*p))) {
		vk_err(err, "cannot set parameters: %s", strerror(errno));
		goto fail;
	}
	/* Without links the map itself is registered: it must not ask for one. */
	if (by_map && bpf_map__set_map_flags(*ops, bpf_map__map_flags(*ops) & ~BPF_F_LINK)) {
		vk_err(err, "cannot prepare a map registration: %s", strerror(errno));
		goto fail;
	}
	if (reuse_own(obj, name, err) || check_shared_pins(obj, err))
		goto fail;
	if (bpf_object__load(obj)) {
		vk_err(err, "the kernel refused to load %s: %s (rerun with -v for the verifier log)",
		     v->name, strerror(errno));
		goto fail;
	}
	if (stamp_ops_map_id(*params, *ops)) {
		vk_err(err, "cannot stamp the parameters: %s", strerror(errno));
		goto fail;
	}
	return obj;
fail:
	bpf_object__close(obj);
	return NULL;
}

bool vk_struct_ops_links(void)
{
	struct btf *btf;
	bool has;

	if (vk_refused("struct_ops_link"))
		return false;
	btf = btf__parse_raw(VK_VMLINUX_BTF);
	has = btf && btf__find_by_name_kind(btf, "bpf_struct_ops_link", BTF_KIND_STRUCT) > 0;
	btf__free(btf);
	return has;
}

/*
 * Does the kernel's tcp_congestion_ops take cong_control(sk, ack, flag, rs),
 * the form calls=1 is written for (Linux >= 6.10; before it, (sk, rs))?
 */
bool vk_one_call_supported(void)
{
	const struct btf_type *t;
	const struct btf_member *m;
	struct btf *btf;
	bool has = false;
	int id;

	if (vk_refused("cong_control_ack"))
		return false;
	btf = btf__parse_raw(VK_VMLINUX_BTF);
	id = btf ? btf__find_by_name_kind(btf, "tcp_congestion_ops", BTF_KIND_STRUCT) : -1;
	if (id > 0) {
		t = btf__type_by_id(btf, id);
		m = btf_members(t);
		for (int i = 0; i < btf_vlen(t); i++, m++) {
			const struct btf_type *f;

			if (strcmp(btf__name_by_offset(btf, m->name_off), "cong_control"))
				continue;
			f = btf__type_by_id(btf, m->type);	/* a pointer to the prototype */
			f = f && btf_is_ptr(f) ? btf__type_by_id(btf, f->type) : NULL;
			has = f && btf_is_func_proto(f) && btf_vlen(f) == 4;
		}
	}
	btf__free(btf);
	return has;
}

/* Register the loaded map (kernels without links): pins first, this is the commit. */
static int register_map(const char *name, struct bpf_map *om, char *err)
{
	char pin[PIN_PATH_MAX];
	struct bpf_link *reg;

	path_of(pin, name, "ops");
	if (bpf_map__pin(om, pin))
		return vk_err(err, "cannot pin %s: %s", pin, strerror(errno));
	vk_crash_point("load:ops-pinned");
	reg = bpf_map__attach_struct_ops(om);	/* map update: the registration */
	if (!reg) {
		if (errno == EEXIST)
			vk_err(err, "a congestion control named '%s' is already registered", name);
		else
			vk_err(err, "cannot register '%s': %s", name, strerror(errno));
		unlink(pin);
		return -1;
	}
	/* The registration holds the map; `unload` deletes it through the pin. */
	bpf_link__disconnect(reg);
	bpf_link__destroy(reg);
	return 0;
}

/* Register through a struct_ops link, and pin it: the pin is the commit. */
static int register_link(const char *name, struct bpf_map *om, struct bpf_map *pm, char *err)
{
	char pin[PIN_PATH_MAX];
	struct bpf_link *link;
	int ret = -1;

	link = bpf_map__attach_struct_ops(om);
	if (!link) {
		if (errno == EEXIST)
			return vk_err(err, "a congestion control named '%s' is already registered", name);
		return vk_err(err, "cannot register '%s': %s", name, strerror(errno));
	}
	vk_crash_point("load:registered");
	path_of(pin, name, "params");
	if (bpf_map__pin(pm, pin)) {
		vk_err(err, "cannot pin %s: %s", pin, strerror(errno));
		goto out;
	}
	vk_crash_point("load:params-pinned");
	path_of(pin, name, "link");
	if (bpf_link__pin(link, pin)) {
		vk_err(err, "cannot pin %s: %s", pin, strerror(errno));
		goto out;
	}
	ret = 0;
out:
	bpf_link__destroy(link);	/* the pin, if any, keeps it registered */
	return ret;
}

static int already_loaded(const char *name, char *err)
{
	return vk_err(err, "'%s' is already loaded by vegaskit (unload it, or load --replace)", name);
}

int vk_instance_check_free(const char *name, char *err)
{
	char dir[PIN_PATH_MAX];

	if (vk_ca_available(name))
		return vk_err(err, "a congestion control named '%s' is already registered", name);
	path_of(dir, name, NULL);
	if (!access(dir, F_OK))		/* an incomplete one: mkdir would find it */
		return already_loaded(name, err);
	return 0;
}

int vk_instance_load(const struct vk_variant_desc *v, const char *name,
		     const struct vk_params *p, char *err)
{
	char dir[PIN_PATH_MAX], pin[PIN_PATH_MAX];
	bool by_map = !vk_struct_ops_links();
	struct bpf_object *obj = NULL;
	struct bpf_map *pm, *om;
	int ret = -1;

	/* Shared pins with no instance left (an unload killed before its prune, or
	 * another version's) are orphans: go before this load reuses or refuses them. */
	prune_root("load:pruning");
	if (mkdir_private(VK_PIN_ROOT, err) || mkdir_private(VK_PIN_CC, err) ||
	    mkdir_private(VK_PIN_SHARED, err))
		return -1;
	path_of(dir, name, NULL);
	if (mkdir(dir, 0700)) {
		if (errno == EEXIST)
			already_loaded(name, err);
		else
			vk_err(err, "cannot create %s: %s", dir, strerror(errno));
		prune_root("load:pruning");
		return -1;
	}
	obj = prepare(v, name, p, by_map, &om, &pm, err);
	if (!obj || pin_own(obj, name, err))
		goto out;
	if (!by_map) {
		ret = register_link(name, om, pm, err);
		goto out;
	}
	path_of(pin, name, "params");
	if (bpf_map__pin(pm, pin)) {
		vk_err(err, "cannot pin %s: %s", pin, strerror(errno));
		goto out;
	}
	ret = register_map(name, om, err);
out:
	if (ret)
		remove_pins(name, dir, "load:pruning");
	bpf_object__close(obj);
	return ret;
}

int vk_instance_replace_check(const char *name, char *err)
{
	char pin[PIN_PATH_MAX];

	path_of(pin, name, "ops");
	if (!access(pin, F_OK))
		return vk_err(err, "cannot replace '%s' in place: it is registered through its struct_ops map (no struct_ops links before Linux 6.4), which cannot be swapped atomically; unload and load it again, or load it under another name and swap", name);
	path_of(pin, name, "link");
	if (access(pin, F_OK))
		return vk_err(err, "'%s' is not loaded by vegaskit: nothing to replace", name);
	return 0;
}

/*
 * In-place upgrade: swap the struct_ops behind the pinned link for a freshly
 * loaded one of the same name (bpf_link__update_map, kernel >= 6.4). New
 * sockets get the new code and parameters; existing ones keep the old until
 * they close. The link update is the commit point; the params pin follows it.
 */
int vk_instance_replace(const struct vk_variant_desc *v, const char *name,
			const struct vk_params *p, char *err)
{
	char pin[PIN_PATH_MAX], next[PIN_PATH_MAX];
	struct bpf_object *obj;
	struct bpf_link *link;
	struct bpf_map *pm, *om;
	int ret = -1;

	if (vk_instance_replace_check(name, err))
		return -1;
	path_of(pin, name, "link");
	link = bpf_link__open(pin);
	if (!link)
		return vk_err(err, "'%s' is not loaded by vegaskit: nothing to replace", name);
	obj = prepare(v, name, p, false, &om, &pm, err);
	if (!obj)
		goto out;
	/* params_new first: if we die after the update, it says which map is live. */
	path_of(next, name, "params_new");
	path_of(pin, name, "params");
	unlink(next);
	if (bpf_map__pin(pm, next)) {
		vk_err(err, "cannot pin %s: %s", next, strerror(errno));
		goto out;
	}
	if (bpf_link__update_map(link, om)) {
		vk_err(err, "cannot replace '%s' in place: %s", name, strerror(errno));
		unlink(next);
		goto out;
	}
	vk_crash_point("replace:updated");
	if (rename(next, pin)) {
		vk_err(err, "replaced, but cannot move %s to %s: %s", next, pin, strerror(errno));
		goto out;
	}
	/* committed: a counter or ring that cannot be pinned does not fail the replace */
	pin_own(obj, name, err);
	err[0] = '\0';
	ret = 0;
out:
	bpf_object__close(obj);
	bpf_link__disconnect(link);	/* keep the kernel link: it is pinned */
	bpf_link__destroy(link);
	return ret;
}

/*
 * Finish a --replace that was interrupted between the link update and the
 * rename of params_new: params_new is live iff it was stamped with the map
 * the link now points at; otherwise the update never happened.
 */
static void repair_replace(const char *name, __u32 live_map_id)
{
	char next[PIN_PATH_MAX], pin[PIN_PATH_MAX];
	struct vk_params p;
	int fd, key = 0;
	bool live;

	path_of(next, name, "params_new");
	fd = bpf_obj_get(next);
	if (fd < 0)
		return;
	live = bpf_map_lookup_elem(fd, &key, &p) == 0 && p.ops_map_id == live_map_id;
	close(fd);
	path_of(pin, name, "params");
	if (live)
		rename(next, pin);
	else
		unlink(next);
}

int vk_instance_read(const char *name, struct vk_instance *inst, char *err)
{
	char pin[PIN_PATH_MAX];
	struct stat st;
	int fd, key = 0;

	memset(inst, 0, sizeof(*inst));
	/* "" would name the cc/ directory itself; a long name overflows path_of */
	if (vk_check_name(name, err))
		return -1;
	snprintf(inst->name, sizeof(inst->name), "%s", name);
	path_of(pin, name, NULL);
	if (stat(pin, &st) || !S_ISDIR(st.st_mode))
		return vk_err(err, "no controller named '%s' was loaded by vegaskit (see: vegasctl list)", name);
	path_of(pin, name, "link");
	fd = bpf_obj_get(pin);
	if (fd >= 0) {
		struct bpf_link_info info = {};
		__u32 len = sizeof(info);

		inst->committed = true;
		if (!bpf_link_get_info_by_fd(fd, &info, &len)) {
			inst->link_id = info.id;
			inst->map_id = info.struct_ops.map_id;
		}
		close(fd);
		repair_replace(name, inst->map_id);
	}
	path_of(pin, name, "ops");
	fd = inst->committed ? -1 : bpf_obj_get(pin);
	if (fd >= 0) {			/* a map registration */
		struct bpf_map_info info = {};
		__u32 len = sizeof(info);

		inst->by_map = true;
		if (!bpf_map_get_info_by_fd(fd, &info, &len))
			inst->map_id = info.id;
		close(fd);
		inst->committed = vk_ca_available(name);
	}
	path_of(pin, name, "params");
	fd = bpf_obj_get(pin);
	if (fd >= 0) {
		struct bpf_map_info info = {};
		__u32 len = sizeof(info);
		bool known, read;

		/* Another layout may be larger: never copy more than our struct holds. */
		known = !bpf_map_get_info_by_fd(fd, &info, &len);
		read = known && info.value_size == sizeof(inst->params) &&
		       bpf_map_lookup_elem(fd, &key, &inst->params) == 0;
		inst->has_params = read && inst->params.magic == VK_PARAMS_MAGIC;
		inst->other_version = known && !inst->has_params &&
				      (info.value_size != sizeof(inst->params) || read);
		if (!inst->has_params)
			memset(&inst->params, 0, sizeof(inst->params));
		close(fd);
	}
	inst->registered = vk_ca_available(name);
	return 0;
}

int vk_instance_write_params(const char *name, const struct vk_params *p, char *err)
{
	char pin[PIN_PATH_MAX];
	int fd, key = 0, ret;

	path_of(pin, name, "params");
	fd = bpf_obj_get(pin);
	if (fd < 0)
		return vk_err(err, "cannot open %s: %s", pin, strerror(errno));
	ret = bpf_map_update_elem(fd, &key, p, BPF_ANY);
	close(fd);
	if (ret)
		return vk_err(err, "cannot update %s: %s", pin, strerror(errno));
	return 0;
}

/* Wait (briefly) for the kernel to drop a registration after its link is freed. */
static bool wait_unregistered(const char *name)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	for (int i = 0; i < 300; i++) {
		if (!vk_ca_available(name))
			return true;
		nanosleep(&ts, NULL);
	}
	return false;
}

/*
 * A map registration ends when its element is deleted. ENOENT: it never
 * began; EINPROGRESS: an earlier unload already ended it (the kernel is
 * freeing it). Either way nothing is registered any more.
 */
static int unregister_map(const char *name, char *err)
{
	char pin[PIN_PATH_MAX];
	int fd, zero = 0, ret = 0;

	path_of(pin, name, "ops");
	fd = bpf_obj_get(pin);
	if (fd < 0)
		return 0;
	if (bpf_map_delete_elem(fd, &zero) && errno != ENOENT && errno != EINPROGRESS)
		ret = vk_err(err, "cannot unregister '%s': %s", name, strerror(errno));
	close(fd);
	return ret;
}

int vk_instance_unload(const char *name, char *err)
{
	char dir[PIN_PATH_MAX], pin[PIN_PATH_MAX];
	struct stat st;

	if (vk_check_name(name, err))
		return -1;
	path_of(dir, name, NULL);
	if (stat(dir, &st) || !S_ISDIR(st.st_mode))
		return vk_err(err, "no controller named '%s' was loaded by vegaskit (see: vegasctl list)", name);
	path_of(pin, name, "link");
	if (unlink(pin) && errno != ENOENT)
		return vk_err(err, "cannot remove %s: %s", pin, strerror(errno));
	if (unregister_map(name, err))
		return -1;
	vk_crash_point("unload:link-unpinned");
	if (remove_pins(name, dir, "unload:pruning"))
		return vk_err(err, "cannot remove %s: %s", dir, strerror(errno));
	if (!wait_unregistered(name))
		return vk_err(err, "'%s' unpinned but the kernel still lists it after 3 s", name);
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(a, b);
}

int vk_instance_names(char (**names)[VK_NAME_MAX])
{
	char (*v)[VK_NAME_MAX] = NULL, (*grown)[VK_NAME_MAX];
	size_t n = 0, cap = 0;
	struct dirent *e;
	DIR *d;

	*names = NULL;
	d = opendir(VK_PIN_CC);
	if (!d)
		return errno == ENOENT ? 0 : -1;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || strlen(e->d_name) >= VK_NAME_MAX)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			grown = realloc(v, cap * sizeof(*v));
			if (!grown) {
				free(v);
				closedir(d);
				return -1;
			}
			v = grown;
		}
		vk_name_from_dir(v[n++], e->d_name);
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), cmp_names);
	*names = v;
	return (int)n;
}

int vk_instance_stats(const char *name, struct vk_stats *st, char *err)
{
	int ncpu = libbpf_num_possible_cpus(), fd, key = 0, ret = 0;
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	char pin[PIN_PATH_MAX];
	struct vk_stats *per;

	memset(st, 0, sizeof(*st));
	if (ncpu <= 0)
		return vk_err(err, "cannot count the CPUs: %s", strerror(-ncpu));
	path_of(pin, name, VK_LEAF_STATS);
	fd = bpf_obj_get(pin);
	if (fd < 0)
		return 1;
	/* another layout (another vegaskit version): no counters we can read */
	if (bpf_map_get_info_by_fd(fd, &info, &len) || info.value_size != sizeof(*st)) {
		close(fd);
		return 1;
	}
	per = calloc(ncpu, sizeof(*per));	/* 8-byte aligned values: no padding needed */
	if (!per) {
		close(fd);
		return vk_err(err, "out of memory");
	}
	if (bpf_map_lookup_elem(fd, &key, per)) {
		ret = vk_err(err, "cannot read %s: %s", pin, strerror(errno));
	} else {
		for (int c = 0; c < ncpu; c++) {
			st->inits += per[c].inits;
			st->moved_in += per[c].moved_in;
			st->releases += per[c].releases;
			st->decisions += per[c].decisions;
			for (int r = 0; r < VK_NR_RULES; r++)
				st->rule_count[r] += per[c].rule_count[r];
			st->decisions_timed += per[c].decisions_timed;
			st->decision_ns += per[c].decision_ns;
			st->record_ns += per[c].record_ns;
			st->clock_ns += per[c].clock_ns;
		}
	}
	free(per);
	close(fd);
	return ret;
}

int vk_instance_events_fd(const char *name)
{
	char pin[PIN_PATH_MAX];

	path_of(pin, name, VK_LEAF_EVENTS);
	return bpf_obj_get(pin);
}
