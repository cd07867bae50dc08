// SPDX-License-Identifier: GPL-2.0
/* Environment checks with their messages (env.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>
#include <bpf/btf.h>
#include "cli.h"
#include "env.h"
#include "instance.h"

#define AVAILABLE_CC	"/proc/sys/net/ipv4/tcp_available_congestion_control"
#define ALLOWED_CC	"/proc/sys/net/ipv4/tcp_allowed_congestion_control"
/* PROC_NET_INIT_INO: the kernel gives the initial namespace this fixed inode. */
#define INIT_NET_INO	0xF0000098u

int vk_pin_dir_check(const char *path, char *err)
{
	struct stat st;

	if (lstat(path, &st))
		return errno == ENOENT ? 0 : vk_err(err, "cannot inspect %s: %s", path, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return vk_err(err, "refusing %s: it is not a directory (a symlink?); someone else made it: "
			      "check, then remove it", path);
	if (st.st_uid != 0)
		return vk_err(err, "refusing %s: it belongs to uid %u, not root, who could take pins "
			      "from it; check, then remove it (rm -r %s)", path, st.st_uid, path);
	if (st.st_mode & 077)
		return vk_err(err, "refusing %s: mode %04o lets others in (vegaskit makes it 0700); "
			      "check, then chmod 0700 %s", path, st.st_mode & 07777, path);
	return 0;
}

/*
 * Commands that change state take one exclusive lock for their whole run, so
 * two sets cannot lose an update and an unload cannot remove the shared pins a
 * load has just reused. The kernel drops it when the process dies, however.
 */
static int lock_fd = -1;

int vk_lock_fd(bool wait, char *err)
{
	int fd = open(VK_LOCK_FILE, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600), e;

	if (fd < 0) {
		e = errno;
		vk_err(err, "cannot open the lock %s: %s", VK_LOCK_FILE, strerror(e));
		errno = e;
		return -1;
	}
	while (flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB))) {
		if (errno == EINTR)
			continue;
		e = errno;
		close(fd);
		if (e != EWOULDBLOCK)
			vk_err(err, "cannot lock %s: %s", VK_LOCK_FILE, strerror(e));
		errno = e;
		return -1;
	}
	return fd;
}

int vk_lock(char *err)
{
	if (lock_fd >= 0)
		return 0;
	lock_fd = vk_lock_fd(true, err);
	return lock_fd < 0 ? -1 : 0;
}

void vk_unlock(void)
{
	if (lock_fd >= 0)
		close(lock_fd);		/* closing the only fd releases the flock */
	lock_fd = -1;
}

int vk_check_env(char *err)
{
	struct statfs st;
	struct btf *btf;
	int has_ops;

	if (geteuid() != 0)
		return vk_err(err, "must be run as root (loading controllers needs CAP_BPF and CAP_NET_ADMIN): try sudo");
	if (statfs("/sys/fs/bpf", &st) || st.f_type != BPF_FS_MAGIC)
		return vk_err(err, "no BPF filesystem at /sys/fs/bpf: mount it with 'mount -t bpf bpf /sys/fs/bpf'");
	if (vk_cli.cmd && vk_cli.cmd->mutates && vk_lock(err))
		return -1;
	if (vk_pin_dir_check(VK_PIN_ROOT, err))
		return -1;
	if (access(VK_VMLINUX_BTF, R_OK))
		return vk_err(err, "kernel BTF missing (%s): a kernel built with CONFIG_DEBUG_INFO_BTF=y is needed", VK_VMLINUX_BTF);
	btf = btf__parse_raw(VK_VMLINUX_BTF);
	if (!btf)
		return vk_err(err, "kernel BTF at %s is unreadable: a kernel built with CONFIG_DEBUG_INFO_BTF=y is needed", VK_VMLINUX_BTF);
	has_ops = btf__find_by_name_kind(btf, "bpf_struct_ops_tcp_congestion_ops", BTF_KIND_STRUCT) > 0;
	btf__free(btf);
	if (!has_ops)
		return vk_err(err, "this kernel cannot run BPF TCP congestion control (no struct_ops for tcp_congestion_ops): Linux >= 5.6 with CONFIG_BPF_JIT is needed");
	return 0;
}

/* Is `name` one of the space-separated names in the file at `path`? */
static bool listed(const char *path, const char *name)
{
	char buf[4096], *tok, *save;
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	for (tok = strtok_r(buf, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
		if (!strcmp(tok, name))
			return true;
	return false;
}

bool vk_ca_available(const char *name)
{
	return listed(AVAILABLE_CC, name);
}

bool vk_ca_unrestricted(const char *name)
{
	return listed(ALLOWED_CC, name);
}

bool vk_in_init_netns(void)
{
	struct stat st;

	return !stat("/proc/self/ns/net", &st) && st.st_ino == INIT_NET_INO;
}
