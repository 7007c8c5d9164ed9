/*
 * kfd_emu: an LD_PRELOAD library that lets the unmodified ROCm userspace (libhsakmt, libdrm_amdgpu,
 * ROCr, rocminfo) run on a rocm-probe fixture. It answers /dev/kfd and the render nodes the
 * fixture's fixture.toml declares, and redirects the sysfs/procfs reads of that stack into the
 * fixture directory, so the real libraries see the machine the fixture captured.
 *
 * Environment:
 *   KFD_EMU_ROOT     absolute path of the fixture directory (required)
 *   KFD_EMU_OVERLAY  absolute path of a directory consulted before the fixture for the pieces a
 *                    capture lacks and the stack insists on (optional; the probe never reads it)
 *   KFD_EMU_TRACE    when set, every redirected path and every answered ioctl goes to stderr
 *
 * Strict: nothing is invented silently. A redirected path missing from both the overlay and the
 * fixture is ENOENT, exactly as on a machine without it; an ioctl the emulator does not know is
 * EINVAL and, under KFD_EMU_TRACE, named.
 *
 * Written in C because open/ioctl/fcntl are variadic and a Rust cdylib overriding libc symbols
 * risks its own runtime re-entering the hooks.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <linux/kfd_ioctl.h>
#include <drm.h>
#include <amdgpu_drm.h>

#define MAX_DEVICES 256
#define MAX_FDS 1024
#define MAX_NODES 128
#define MAX_GROUPS 64

/* The character-device majors reported for the emulated nodes. DRM's is fixed by the kernel
 * (DRM_MAJOR); KFD's is dynamic on a real machine, so the fixture's sys/class/kfd/kfd/dev wins. */
#define DRM_MAJOR_NUMBER 226
#define KFD_DEFAULT_MAJOR 235

enum kind { NONE = 0, KFD, RENDER };

/* A POSIX ACL entry of a device node (fixture.toml's `acl`, getfacl -n text); tags as in
 * linux/posix_acl.h. */
enum { ACL_USER_OBJ = 1, ACL_USER = 2, ACL_GROUP_OBJ = 4, ACL_GROUP = 8, ACL_MASK = 16,
       ACL_OTHER = 32 };
#define MAX_ACL 64

struct acl_entry {
	unsigned tag, id, perm;
};

struct device {
	char path[PATH_MAX];
	unsigned mode;
	unsigned uid, gid;
	int nacl; /* 0: no ACL, the mode bits decide */
	struct acl_entry acl[MAX_ACL];
};

struct node {
	unsigned id;
	unsigned gpu_id;
	unsigned device_id;
	unsigned render_minor;
	unsigned gfx_version; /* gfx_target_version, e.g. 110000 */
	unsigned simd_count, simd_per_cu, array_count, cu_per_simd_array, simd_arrays_per_engine;
	unsigned max_engine_clk;
	unsigned long long local_mem_size;
	unsigned long long bank_bytes; /* the node's mem_banks, summed */
	unsigned pci_rev; /* the render node's device/revision; 0 when not captured */
};

static struct {
	int ready;
	char root[PATH_MAX];
	char overlay[PATH_MAX];
	int trace;
	struct device devices[MAX_DEVICES];
	int ndevices;
	int have_identity;
	unsigned uid;
	unsigned groups[MAX_GROUPS];
	int ngroups;
	unsigned kfd_major;
	struct node nodes[MAX_NODES];
	int nnodes;
	unsigned kfd_minor_version;
	/* The [emulate] table: faults the fixture asks for (fixtures/README.md). */
	unsigned kfd_major_version;
	unsigned hidden[MAX_NODES]; /* gpu_ids a device cgroup denies: left out of the apertures */
	int nhidden;
	unsigned dispatch_hang[MAX_NODES]; /* gpu_ids whose queues never complete a packet */
	int ndispatch_hang;
	int kfd_open_errno; /* an open of /dev/kfd fails with this errno (0: it does not) */
	unsigned render_eperm[MAX_NODES]; /* render minors whose opens fail with EPERM */
	int nrender_eperm;
	int have_version;
	/* kfd_numbering = "roc-1.6": the ioctl table of ROCm 1.6's own kernel, not upstream's. */
	int roc16_numbering;
	/* Why this fixture cannot be emulated (a file the stack reads that neither the overlay nor
	 * the fixture holds), reported when /dev/kfd is opened. */
	char missing[PATH_MAX + 128];
} emu;

/* fd → what it emulates (0 for a real file). */
static struct {
	enum kind kind;
	unsigned minor;
} fds[MAX_FDS];

static pthread_once_t once = PTHREAD_ONCE_INIT;

#define REAL(name) static __typeof__(name) *real_##name; if (!real_##name) real_##name = dlsym(RTLD_NEXT, #name)

static void trace(const char *fmt, ...)
{
	if (!emu.trace)
		return;
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof buf)
		n = sizeof buf - 1;
	buf[n++] = '\n';
	/* write(2), not stdio: the hooks run inside stdio calls. */
	ssize_t w = syscall(SYS_write, 2, buf, (size_t)n);
	(void)w;
}

static void die(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof buf)
		n = sizeof buf - 1;
	ssize_t w = syscall(SYS_write, 2, "kfd_emu: ", (size_t)9);
	w = syscall(SYS_write, 2, buf, (size_t)n);
	w = syscall(SYS_write, 2, "\n", (size_t)1);
	(void)w;
	_exit(70);
}

/* ---- fixture.toml: the [identity], [[device]] and [emulate] tables, nothing else ---- */

/* The unsigned integers of an array value, `[1, 8]` or `[41190, 50563]`. */
static int int_list(const char *val, unsigned *out, int cap)
{
	int n = 0;
	const char *p = val;
	while (*p && n < cap) {
		while (*p && (*p < '0' || *p > '9'))
			p++;
		if (!*p)
			break;
		char *end;
		out[n++] = (unsigned)strtoul(p, &end, 10);
		p = end;
	}
	return n;
}

static int listed(const unsigned *list, int n, unsigned v)
{
	for (int i = 0; i < n; i++)
		if (list[i] == v)
			return 1;
	return 0;
}

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	char *e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
		*--e = 0;
	return s;
}

/* A value: "string" (no escapes in the keys read here), an integer, or [a, b]. */
static void unquote(char *v, char *out, size_t cap)
{
	size_t n = strlen(v);
	if (n >= 2 && v[0] == '"' && v[n - 1] == '"') {
		v[n - 1] = 0;
		v++;
	}
	snprintf(out, cap, "%s", v);
}

/* The entries of `acl = ["user::rw-", "user:1000:rw-", ...]`, on one line as snapshot writes
 * it; the probe has already refused a malformed list, so an entry that does not parse stops the
 * emulator rather than being guessed at. */
static void parse_acl(const char *val, struct device *d)
{
	const char *p = val;
	d->nacl = 0;
	while ((p = strchr(p, '"'))) {
		const char *end = strchr(++p, '"');
		if (!end)
			break;
		char e[64];
		snprintf(e, sizeof e, "%.*s", (int)(end - p), p);
		p = end + 1;
		if (d->nacl == MAX_ACL)
			die("%s: more than %d ACL entries", d->path, MAX_ACL);
		char *q1 = strchr(e, ':'), *q2 = q1 ? strchr(q1 + 1, ':') : NULL;
		if (!q2 || strlen(q2 + 1) != 3)
			die("%s: ACL entry \"%s\" is not kind:id:rwx", d->path, e);
		*q1 = *q2 = 0;
		struct acl_entry *a = &d->acl[d->nacl++];
		int named = q1[1] != 0;
		a->id = named ? (unsigned)strtoul(q1 + 1, NULL, 10) : 0;
		if (!strcmp(e, "user"))
			a->tag = named ? ACL_USER : ACL_USER_OBJ;
		else if (!strcmp(e, "group"))
			a->tag = named ? ACL_GROUP : ACL_GROUP_OBJ;
		else if (!strcmp(e, "mask") && !named)
			a->tag = ACL_MASK;
		else if (!strcmp(e, "other") && !named)
			a->tag = ACL_OTHER;
		else
			die("%s: ACL entry kind \"%s\" unknown", d->path, e);
		const char *r = q2 + 1;
		a->perm = (r[0] == 'r' ? 4 : 0) | (r[1] == 'w' ? 2 : 0) | (r[2] == 'x' ? 1 : 0);
	}
}

static void read_fixture_toml(void)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/fixture.toml", emu.root);
	int fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW, 0);
	if (fd < 0)
		die("cannot open %s: %s", path, strerror(errno));
	static char text[1 << 20];
	size_t len = 0;
	for (;;) {
		ssize_t r = syscall(SYS_read, fd, text + len, sizeof text - 1 - len);
		if (r <= 0)
			break;
		len += (size_t)r;
		if (len == sizeof text - 1)
			die("%s is larger than 1 MiB", path);
	}
	syscall(SYS_close, fd);
	text[len] = 0;

	enum { OTHER, IDENTITY, DEVICE, EMULATE } table = OTHER;
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *hash = strchr(line, '#');
		/* Comments only outside strings; the keys read here never hold '#'. */
		if (hash && !memchr(line, '"', (size_t)(hash - line)))
			*hash = 0;
		char *l = trim(line);
		if (!*l)
			continue;
		if (l[0] == '[') {
			if (!strcmp(l, "[identity]")) {
				table = IDENTITY;
				emu.have_identity = 1;
			} else if (!strcmp(l, "[emulate]")) {
				table = EMULATE;
			} else if (!strcmp(l, "[[device]]")) {
				if (emu.ndevices == MAX_DEVICES)
					die("more than %d [[device]] entries", MAX_DEVICES);
				table = DEVICE;
				struct device *d = &emu.devices[emu.ndevices++];
				memset(d, 0, sizeof *d);
				d->mode = 0660;
			} else {
				table = OTHER;
			}
			continue;
		}
		char *eq = strchr(l, '=');
		if (!eq || table == OTHER)
			continue;
		*eq = 0;
		char *key = trim(l), *val = trim(eq + 1);
		if (table == DEVICE) {
			struct device *d = &emu.devices[emu.ndevices - 1];
			char v[PATH_MAX];
			unquote(val, v, sizeof v);
			if (!strcmp(key, "path"))
				snprintf(d->path, sizeof d->path, "%s", v);
			else if (!strcmp(key, "mode"))
				d->mode = (unsigned)strtoul(v, NULL, 8);
			else if (!strcmp(key, "uid"))
				d->uid = (unsigned)strtoul(v, NULL, 10);
			else if (!strcmp(key, "gid"))
				d->gid = (unsigned)strtoul(v, NULL, 10);
			else if (!strcmp(key, "acl"))
				parse_acl(val, d);
		} else if (table == EMULATE) {
			if (!strcmp(key, "kfd_version")) {
				unsigned v[2];
				if (int_list(val, v, 2) != 2)
					die("[emulate] kfd_version must be [major, minor]");
				emu.kfd_major_version = v[0];
				emu.kfd_minor_version = v[1];
				emu.have_version = 1;
			} else if (!strcmp(key, "hidden_gpus")) {
				emu.nhidden = int_list(val, emu.hidden, MAX_NODES);
			} else if (!strcmp(key, "dispatch_hang")) {
				emu.ndispatch_hang = int_list(val, emu.dispatch_hang, MAX_NODES);
			} else if (!strcmp(key, "kfd_open_errno")) {
				unsigned e;
				if (int_list(val, &e, 1) != 1 || e == 0 || e > 4095)
					die("[emulate] kfd_open_errno must be an errno number");
				emu.kfd_open_errno = (int)e;
			} else if (!strcmp(key, "render_eperm")) {
				emu.nrender_eperm = int_list(val, emu.render_eperm, MAX_NODES);
			} else if (!strcmp(key, "kfd_numbering")) {
				char v[32];
				unquote(val, v, sizeof v);
				if (strcmp(v, "roc-1.6"))
					die("[emulate] kfd_numbering must be \"roc-1.6\"");
				emu.roc16_numbering = 1;
			} else if (!strcmp(key, "hide_libraries")) {
				/* scripts/emulate hides them (a mount namespace) before this library loads */
			} else {
				die("[emulate] has no key %s (fixtures/README.md lists them)", key);
			}
		} else if (table == IDENTITY) {
			if (!strcmp(key, "uid")) {
				emu.uid = (unsigned)strtoul(val, NULL, 10);
			} else if (!strcmp(key, "groups")) {
				char *p = val;
				while (*p && emu.ngroups < MAX_GROUPS) {
					while (*p && (*p < '0' || *p > '9'))
						p++;
					if (!*p)
						break;
					emu.groups[emu.ngroups++] = (unsigned)strtoul(p, &p, 10);
				}
			}
		}
	}
}

/* ---- path redirection ---- */

/* Where each redirected prefix lives in the fixture. libhsakmt reads KFD's topology through
 * /sys/devices/virtual/kfd/kfd; fixtures hold it under sys/class/kfd/kfd, as the probe reads it. */
static const struct {
	const char *from;
	const char *to;
} prefixes[] = {
	{"/sys/devices/virtual/kfd/kfd", "/sys/class/kfd/kfd"},
	{"/sys/class/kfd", NULL},
	{"/sys/class/drm", NULL},
	{"/sys/bus/pci", NULL},
	{"/sys/module/amdgpu", NULL},
	{"/sys/dev/char", NULL},
	{"/sys/devices/system/node", NULL},
	{"/sys/devices/system/cpu", NULL},
	{"/sys/devices/pci", NULL},
	{"/usr/share/libdrm/amdgpu.ids", NULL},
	{"/opt/amdgpu/share/libdrm/amdgpu.ids", NULL},
	{"/proc/cpuinfo", NULL},
	{"/proc/modules", NULL},
};

static int exists(const char *p)
{
	struct stat st;
	return syscall(SYS_newfstatat, AT_FDCWD, p, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* The fixture (or overlay) path for `path`, or NULL when `path` is not redirected. A file is
 * taken from the overlay first; a directory the fixture has is listed from the fixture (the
 * overlay only adds files inside directories, so the fixture's listing is the complete one). */
static const char *redirect_as(const char *path, char *out, size_t cap, int directory);

static const char *redirect(const char *path, char *out, size_t cap)
{
	return redirect_as(path, out, cap, 0);
}

static const char *redirect_as(const char *path, char *out, size_t cap, int directory)
{
	if (!emu.ready || !path || path[0] != '/')
		return NULL;
	/* Paths already inside the fixture or overlay (symlinks resolved there) stay as they are. */
	size_t rl = strlen(emu.root);
	if (!strncmp(path, emu.root, rl) && (path[rl] == '/' || !path[rl]))
		return NULL;
	if (emu.overlay[0]) {
		size_t ol = strlen(emu.overlay);
		if (!strncmp(path, emu.overlay, ol) && (path[ol] == '/' || !path[ol]))
			return NULL;
	}
	/* /sys/dev/char/226:M is the kernel's link to the same directory as /sys/class/drm/renderDM:
	 * a capture holding the one answers the other. */
	unsigned maj, min;
	int used = 0;
	char alias[PATH_MAX];
	if (sscanf(path, "/sys/dev/char/%u:%u%n", &maj, &min, &used) == 2 && maj == DRM_MAJOR_NUMBER
	    && (path[used] == '/' || !path[used])) {
		snprintf(out, cap, "%s/sys/dev/char/%u:%u", emu.root, maj, min);
		if (!exists(out)) {
			snprintf(alias, sizeof alias, "/sys/class/drm/renderD%u%s", min, path + used);
			path = alias;
		}
	}
	for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
		size_t n = strlen(prefixes[i].from);
		if (strncmp(path, prefixes[i].from, n) || (path[n] != '/' && path[n]))
			continue;
		const char *to = prefixes[i].to ? prefixes[i].to : prefixes[i].from;
		if (directory) {
			snprintf(out, cap, "%s%s%s", emu.root, to, path + n);
			if (exists(out)) {
				trace("dir %s -> %s", path, out);
				return out;
			}
		}
		if (emu.overlay[0]) {
			snprintf(out, cap, "%s%s%s", emu.overlay, to, path + n);
			if (exists(out)) {
				trace("path %s -> %s", path, out);
				return out;
			}
		}
		/* A fixture holding the /sys/devices/virtual spelling itself is read as it is. */
		snprintf(out, cap, "%s%s", emu.root, path);
		if (!prefixes[i].to || !exists(out))
			snprintf(out, cap, "%s%s%s", emu.root, to, path + n);
		trace("path %s -> %s%s", path, out, exists(out) ? "" : " (absent)");
		return out;
	}
	return NULL;
}

/* /proc/modules as the kernel derives it: one line per module whose sys/module/M/initstate is
 * "live", for a fixture (and overlay) that captured sys/module but not /proc/modules. */
static int synth_modules(void)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/proc/modules", emu.overlay[0] ? emu.overlay : emu.root);
	if (exists(path))
		return -2;
	snprintf(path, sizeof path, "%s/proc/modules", emu.root);
	if (exists(path))
		return -2;
	REAL(opendir);
	snprintf(path, sizeof path, "%s/sys/module", emu.root);
	DIR *d = real_opendir(path);
	int fd = memfd_create("kfd_emu-modules", MFD_CLOEXEC);
	if (fd < 0) {
		if (d)
			closedir(d);
		return -1;
	}
	for (struct dirent *e; d && (e = readdir(d));) {
		char state[64], line[512];
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/sys/module/%s/initstate", emu.root, e->d_name);
		int f = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0);
		if (f < 0)
			continue;
		ssize_t r = syscall(SYS_read, f, state, sizeof state - 1);
		syscall(SYS_close, f);
		if (r <= 0 || strncmp(state, "live", 4))
			continue;
		int n = snprintf(line, sizeof line, "%s 0 0 - Live 0x0000000000000000\n", e->d_name);
		if (n > 0 && syscall(SYS_write, fd, line, (size_t)n) != n)
			break;
	}
	if (d)
		closedir(d);
	lseek(fd, 0, SEEK_SET);
	trace("path /proc/modules -> derived from %s/sys/module", emu.root);
	return fd;
}

/* ---- emulated device nodes ---- */

static const struct device *device_for(const char *path)
{
	for (int i = 0; i < emu.ndevices; i++)
		if (!strcmp(emu.devices[i].path, path))
			return &emu.devices[i];
	return NULL;
}

static int is_emulated_path(const char *path, enum kind *kind, unsigned *minor)
{
	if (!emu.ready || !path)
		return 0;
	if (!strcmp(path, "/dev/kfd")) {
		*kind = KFD;
		*minor = 0;
		return 1;
	}
	unsigned m;
	char tail;
	if (sscanf(path, "/dev/dri/renderD%u%c", &m, &tail) == 1) {
		*kind = RENDER;
		*minor = m;
		return 1;
	}
	return 0;
}

static int in_groups(unsigned gid)
{
	for (int i = 0; i < emu.ngroups; i++)
		if (emu.groups[i] == gid)
			return 1;
	return 0;
}

/* acl(5)'s access check: owner entry; a named entry for the uid, under the mask; the group
 * class (any matching group entry under the mask grants, none refuses); other. */
static int acl_permits(const struct device *d, unsigned want)
{
	unsigned mask = 7, other = 0;
	for (int i = 0; i < d->nacl; i++) {
		if (d->acl[i].tag == ACL_MASK)
			mask = d->acl[i].perm;
		else if (d->acl[i].tag == ACL_OTHER)
			other = d->acl[i].perm;
	}
	for (int i = 0; i < d->nacl; i++)
		if (d->acl[i].tag == ACL_USER_OBJ && d->uid == emu.uid)
			return (d->acl[i].perm & want) == want;
	for (int i = 0; i < d->nacl; i++)
		if (d->acl[i].tag == ACL_USER && d->acl[i].id == emu.uid)
			return (d->acl[i].perm & mask & want) == want;
	int matched = 0;
	for (int i = 0; i < d->nacl; i++) {
		const struct acl_entry *a = &d->acl[i];
		int member = (a->tag == ACL_GROUP_OBJ && in_groups(d->gid)) ||
			     (a->tag == ACL_GROUP && in_groups(a->id));
		if (!member)
			continue;
		if ((a->perm & mask & want) == want)
			return 1;
		matched = 1;
	}
	return !matched && (other & want) == want;
}

/* The fixture's identity may open the node (owner, group or other bits, or its ACL), as the
 * kernel decides. */
static int permitted(const struct device *d, int flags)
{
	if (!emu.have_identity || emu.uid == 0)
		return 1;
	unsigned want = 0;
	int acc = flags & O_ACCMODE;
	if (acc == O_RDONLY || acc == O_RDWR)
		want |= 4;
	if (acc == O_WRONLY || acc == O_RDWR)
		want |= 2;
	if (d->nacl)
		return acl_permits(d, want);
	unsigned bits;
	if (d->uid == emu.uid) {
		bits = (d->mode >> 6) & 7;
	} else {
		int member = 0;
		for (int i = 0; i < emu.ngroups; i++)
			if (emu.groups[i] == d->gid)
				member = 1;
		bits = member ? (d->mode >> 3) & 7 : d->mode & 7;
	}
	return (bits & want) == want;
}

static int emulated_open(const char *path, int flags, enum kind kind, unsigned minor)
{
	if (kind == KFD && emu.missing[0])
		die("%s", emu.missing);
	const struct device *d = device_for(path);
	if (!d) {
		trace("open %s: ENOENT (not in fixture.toml)", path);
		errno = ENOENT;
		return -1;
	}
	/* Before the mode bits: what the kernel refuses for reasons the fixture's files do not show
	 * (a container runtime's device cgroup, an LSM), recorded as the errno the open saw. */
	if (kind == KFD && emu.kfd_open_errno) {
		trace("open %s: errno %d ([emulate] kfd_open_errno)", path, emu.kfd_open_errno);
		errno = emu.kfd_open_errno;
		return -1;
	}
	if (kind == RENDER && listed(emu.render_eperm, emu.nrender_eperm, minor)) {
		trace("open %s: EPERM ([emulate] render_eperm)", path);
		errno = EPERM;
		return -1;
	}
	if (!permitted(d, flags)) {
		trace("open %s: EACCES (fixture identity)", path);
		errno = EACCES;
		return -1;
	}
	int fd = memfd_create(kind == KFD ? "kfd_emu-kfd" : "kfd_emu-render",
			      (flags & O_CLOEXEC) ? MFD_CLOEXEC : 0);
	if (fd < 0)
		return -1;
	if (fd >= MAX_FDS) {
		syscall(SYS_close, fd);
		errno = EMFILE;
		return -1;
	}
	fds[fd].kind = kind;
	fds[fd].minor = minor;
	trace("open %s -> fd %d", path, fd);
	return fd;
}

static enum kind fd_kind(int fd)
{
	return fd >= 0 && fd < MAX_FDS ? fds[fd].kind : NONE;
}

static void fill_stat(struct stat *st, enum kind kind, unsigned minor, const struct device *d)
{
	memset(st, 0, sizeof *st);
	st->st_mode = S_IFCHR | (d ? d->mode : 0666);
	st->st_uid = d ? d->uid : 0;
	st->st_gid = d ? d->gid : 0;
	st->st_nlink = 1;
	st->st_blksize = 4096;
	st->st_rdev = kind == KFD ? makedev(emu.kfd_major, 0) : makedev(DRM_MAJOR_NUMBER, minor);
}

static const struct device *device_of_fd(int fd)
{
	char path[64];
	if (fds[fd].kind == KFD)
		return device_for("/dev/kfd");
	snprintf(path, sizeof path, "/dev/dri/renderD%u", fds[fd].minor);
	return device_for(path);
}

/* ---- topology, read once from the fixture (through the overlay) ---- */

static void require(const char *path);

static int read_file(const char *path, char *buf, size_t cap)
{
	char mapped[PATH_MAX];
	const char *p = redirect(path, mapped, sizeof mapped);
	int fd = syscall(SYS_openat, AT_FDCWD, p ? p : path, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	ssize_t r = syscall(SYS_read, fd, buf, cap - 1);
	syscall(SYS_close, fd);
	if (r < 0)
		return -1;
	buf[r] = 0;
	return 0;
}

static unsigned long long prop(const char *props, const char *key)
{
	size_t n = strlen(key);
	for (const char *l = props; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, key, n) && l[n] == ' ')
			return strtoull(l + n + 1, NULL, 10);
	return 0;
}

static void read_topology(void)
{
	char buf[8192], path[PATH_MAX];
	for (unsigned i = 0; i < MAX_NODES; i++) {
		snprintf(path, sizeof path, "/sys/devices/virtual/kfd/kfd/topology/nodes/%u/properties", i);
		if (read_file(path, buf, sizeof buf))
			break;
		struct node *n = &emu.nodes[emu.nnodes++];
		memset(n, 0, sizeof *n);
		n->id = i;
		n->device_id = (unsigned)prop(buf, "device_id");
		n->render_minor = (unsigned)prop(buf, "drm_render_minor");
		n->gfx_version = (unsigned)prop(buf, "gfx_target_version");
		n->simd_count = (unsigned)prop(buf, "simd_count");
		n->simd_per_cu = (unsigned)prop(buf, "simd_per_cu");
		n->array_count = (unsigned)prop(buf, "array_count");
		n->cu_per_simd_array = (unsigned)prop(buf, "cu_per_simd_array");
		n->simd_arrays_per_engine = (unsigned)prop(buf, "simd_arrays_per_engine");
		n->max_engine_clk = (unsigned)prop(buf, "max_engine_clk_fcompute");
		n->local_mem_size = prop(buf, "local_mem_size");
		snprintf(path, sizeof path, "/sys/class/drm/renderD%u/device/revision", n->render_minor);
		if (n->simd_count && !read_file(path, buf, sizeof buf))
			n->pci_rev = (unsigned)strtoul(buf, NULL, 16);
		for (unsigned b = 0; b < 64; b++) {
			char bank[1024];
			snprintf(path, sizeof path,
				 "/sys/devices/virtual/kfd/kfd/topology/nodes/%u/mem_banks/%u/properties", i, b);
			if (read_file(path, bank, sizeof bank))
				break;
			n->bank_bytes += prop(bank, "size_in_bytes");
		}
		snprintf(path, sizeof path, "/sys/devices/virtual/kfd/kfd/topology/nodes/%u/gpu_id", i);
		if (!read_file(path, buf, sizeof buf))
			n->gpu_id = (unsigned)strtoul(buf, NULL, 10);
		else if (n->simd_count)
			require(path);
		/* libhsakmt reads as many banks, caches and links as the properties count, and fails the
		 * whole topology on the first one missing. */
		static const struct {
			const char *key, *dir;
		} counted[] = {{"mem_banks_count", "mem_banks"}, {"caches_count", "caches"},
			       {"io_links_count", "io_links"}};
		char props[8192];
		snprintf(path, sizeof path, "/sys/devices/virtual/kfd/kfd/topology/nodes/%u/properties", i);
		if (read_file(path, props, sizeof props))
			continue;
		for (size_t k = 0; k < sizeof counted / sizeof counted[0]; k++) {
			unsigned long long count = prop(props, counted[k].key);
			for (unsigned long long j = 0; j < count && j < 4096; j++) {
				snprintf(path, sizeof path,
					 "/sys/devices/virtual/kfd/kfd/topology/nodes/%u/%s/%llu/properties", i,
					 counted[k].dir, j);
				if (read_file(path, buf, 2)) {
					require(path);
					break;
				}
			}
		}
	}
	for (const char *const *f = (const char *const[]){"generation_id", "system_properties", NULL}; *f; f++) {
		snprintf(path, sizeof path, "/sys/devices/virtual/kfd/kfd/topology/%s", *f);
		if (read_file(path, buf, 2))
			require(path);
	}
}

/* Records the first file the stack needs that neither the overlay nor the fixture holds. */
static void require(const char *path)
{
	if (emu.missing[0])
		return;
	const char *tail = strstr(path, "/topology/");
	snprintf(emu.missing, sizeof emu.missing,
		 "the fixture lacks sys/class/kfd/kfd%s, which libhsakmt reads: add it to the overlay "
		 "%s/ and list it in the fixture's README", tail ? tail : path,
		 emu.overlay[0] ? emu.overlay : "(KFD_EMU_OVERLAY unset) emulate");
}

static const struct node *node_by_minor(unsigned minor)
{
	for (int i = 0; i < emu.nnodes; i++)
		if (emu.nodes[i].gpu_id && emu.nodes[i].render_minor == minor)
			return &emu.nodes[i];
	return NULL;
}

static void init(void)
{
	const char *root = getenv("KFD_EMU_ROOT");
	if (!root || root[0] != '/')
		die("KFD_EMU_ROOT must be the absolute path of a fixture directory");
	snprintf(emu.root, sizeof emu.root, "%s", root);
	const char *overlay = getenv("KFD_EMU_OVERLAY");
	if (overlay && overlay[0]) {
		if (overlay[0] != '/')
			die("KFD_EMU_OVERLAY must be an absolute path");
		snprintf(emu.overlay, sizeof emu.overlay, "%s", overlay);
	}
	emu.trace = getenv("KFD_EMU_TRACE") != NULL;
	emu.kfd_major = KFD_DEFAULT_MAJOR;
	if (!emu.have_version) {
		emu.kfd_major_version = 1;
		emu.kfd_minor_version = 11;
	}
	read_fixture_toml();
	emu.ready = 1;
	char buf[64];
	unsigned maj, min;
	if (!read_file("/sys/class/kfd/kfd/dev", buf, sizeof buf) && sscanf(buf, "%u:%u", &maj, &min) == 2)
		emu.kfd_major = maj;
	read_topology();
}

__attribute__((constructor)) static void kfd_emu_load(void)
{
	pthread_once(&once, init);
}

/* ---- KFD events: a real table, so a waiter times out or wakes as on a real kernel ---- */

#define MAX_EVENTS 4096
/* As KFD's events (kfd_events.c): setting one wakes every thread waiting on it at that moment;
 * an auto-reset event stays set only when nobody was waiting, until one wait consumes it. */
static struct {
	int used, signaled, auto_reset;
	unsigned waiters;
	unsigned long long generation;
} events[MAX_EVENTS];
static pthread_mutex_t events_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t events_cond = PTHREAD_COND_INITIALIZER;

static int create_event(struct kfd_ioctl_create_event_args *a)
{
	pthread_mutex_lock(&events_lock);
	for (unsigned i = 1; i < MAX_EVENTS; i++) {
		if (events[i].used)
			continue;
		events[i].used = 1;
		events[i].signaled = 0;
		events[i].auto_reset = a->auto_reset != 0;
		pthread_mutex_unlock(&events_lock);
		a->event_id = i;
		a->event_slot_index = i;
		a->event_trigger_data = i;
		/* KFD_MMAP_TYPE_EVENTS: the page ROCr maps for signal event slots. */
		a->event_page_offset = (2ULL << 62);
		return 0;
	}
	pthread_mutex_unlock(&events_lock);
	errno = ENOMEM;
	return -1;
}

static int set_event(unsigned id, int value)
{
	if (!id || id >= MAX_EVENTS) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&events_lock);
	if (value) {
		events[id].generation++;
		events[id].signaled = !events[id].auto_reset || !events[id].waiters;
		pthread_cond_broadcast(&events_cond);
	} else {
		events[id].signaled = 0;
	}
	pthread_mutex_unlock(&events_lock);
	return 0;
}

static int wait_events(struct kfd_ioctl_wait_events_args *a)
{
	struct kfd_event_data *ev = (void *)(uintptr_t)a->events_ptr;
	uint32_t n = a->num_events < 64 ? a->num_events : 64;
	unsigned long long seen[64];
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	uint64_t ns = (uint64_t)until.tv_nsec + (uint64_t)a->timeout * 1000000ULL;
	until.tv_sec += (time_t)(ns / 1000000000ULL);
	until.tv_nsec = (long)(ns % 1000000000ULL);
	pthread_mutex_lock(&events_lock);
	for (uint32_t i = 0; i < n; i++) {
		unsigned id = ev[i].event_id;
		if (id && id < MAX_EVENTS) {
			seen[i] = events[id].generation;
			events[id].waiters++;
		}
	}
	for (;;) {
		unsigned ready = 0;
		for (uint32_t i = 0; i < n; i++) {
			unsigned id = ev[i].event_id;
			if (id && id < MAX_EVENTS && (events[id].signaled || events[id].generation != seen[i]))
				ready++;
		}
		if (n && (a->wait_for_all ? ready == n : ready > 0)) {
			for (uint32_t i = 0; i < n; i++) {
				unsigned id = ev[i].event_id;
				if (id && id < MAX_EVENTS && events[id].auto_reset)
					events[id].signaled = 0;
			}
			a->wait_result = KFD_IOC_WAIT_RESULT_COMPLETE;
			break;
		}
		if (a->timeout == 0xFFFFFFFFu) {
			pthread_cond_wait(&events_cond, &events_lock);
		} else if (pthread_cond_timedwait(&events_cond, &events_lock, &until) == ETIMEDOUT) {
			a->wait_result = KFD_IOC_WAIT_RESULT_TIMEOUT;
			break;
		}
	}
	for (uint32_t i = 0; i < n; i++) {
		unsigned id = ev[i].event_id;
		if (id && id < MAX_EVENTS && events[id].waiters)
			events[id].waiters--;
	}
	pthread_mutex_unlock(&events_lock);
	return 0;
}

static uint64_t now_ns(clockid_t clock)
{
	struct timespec t;
	clock_gettime(clock, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

/* ---- AQL queues: a packet processor that completes barrier packets, and nothing else ---- */

#define MAX_QUEUES 128
static struct queue {
	int used;
	int hang; /* the fixture's [emulate] dispatch_hang names its GPU: nothing completes */
	uint8_t *ring;
	uint64_t ring_packets;
	volatile uint64_t *wptr, *rptr;
} queues[MAX_QUEUES];
static pthread_mutex_t queues_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t processor_once = PTHREAD_ONCE_INIT;

enum { AQL_INVALID = 1, AQL_BARRIER_AND = 3, AQL_BARRIER_OR = 5 };

/* amd_signal_t (ROCr's amd_hsa_signal.h): kind at 0, value at 8, event mailbox at 16, event id
 * at 24. A barrier's completion signal is decremented and its event fired, as the CP does. */
static void complete_signal(uint64_t handle)
{
	if (!handle)
		return;
	int64_t *value = (int64_t *)(uintptr_t)(handle + 8);
	uint64_t mailbox = *(volatile uint64_t *)(uintptr_t)(handle + 16);
	uint32_t event = *(volatile uint32_t *)(uintptr_t)(handle + 24);
	__atomic_fetch_sub(value, 1, __ATOMIC_SEQ_CST);
	if (mailbox) {
		__atomic_store_n((uint64_t *)(uintptr_t)mailbox, (uint64_t)event, __ATOMIC_SEQ_CST);
		set_event(event, 1);
	}
}

static int dependencies_met(const uint8_t *packet, int and)
{
	int any = 0, all = 1, deps = 0;
	for (int i = 0; i < 5; i++) {
		uint64_t dep = *(const volatile uint64_t *)(packet + 8 + 8 * i);
		if (!dep)
			continue;
		deps++;
		int done = __atomic_load_n((int64_t *)(uintptr_t)(dep + 8), __ATOMIC_SEQ_CST) == 0;
		any |= done;
		all &= done;
	}
	return !deps || (and ? all : any);
}

/* Barrier-AND/OR packets complete; any other packet (a kernel dispatch) is left where it is:
 * nothing executes kernels here, so its waiter times out rather than be told it ran. */
static void *processor(void *unused)
{
	(void)unused;
	for (;;) {
		pthread_mutex_lock(&queues_lock);
		for (int q = 0; q < MAX_QUEUES; q++) {
			struct queue *qu = &queues[q];
			if (!qu->used || qu->hang)
				continue;
			uint64_t r = *qu->rptr;
			if (r >= *qu->wptr)
				continue;
			uint8_t *packet = qu->ring + (r % qu->ring_packets) * 64;
			uint16_t header = __atomic_load_n((uint16_t *)packet, __ATOMIC_ACQUIRE);
			int type = header & 0xff;
			if ((type != AQL_BARRIER_AND && type != AQL_BARRIER_OR) ||
			    !dependencies_met(packet, type == AQL_BARRIER_AND))
				continue;
			complete_signal(*(volatile uint64_t *)(packet + 56));
			__atomic_store_n((uint16_t *)packet, (uint16_t)AQL_INVALID, __ATOMIC_RELEASE);
			__atomic_store_n(qu->rptr, r + 1, __ATOMIC_SEQ_CST);
			trace("queue %d: barrier packet %llu completed", q, (unsigned long long)r);
		}
		pthread_mutex_unlock(&queues_lock);
		struct timespec nap = {0, 200000};
		nanosleep(&nap, NULL);
	}
	return NULL;
}

static void start_processor(void)
{
	pthread_t t;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_create(&t, &attr, processor, NULL);
	pthread_attr_destroy(&attr);
}

static int create_queue(struct kfd_ioctl_create_queue_args *a)
{
	if (a->queue_type != KFD_IOC_QUEUE_TYPE_COMPUTE_AQL) {
		/* SDMA and PM4 queues: accepted, never processed. */
		a->queue_id = MAX_QUEUES + 1;
		a->doorbell_offset = 0;
		return 0;
	}
	pthread_once(&processor_once, start_processor);
	pthread_mutex_lock(&queues_lock);
	for (int q = 0; q < MAX_QUEUES; q++) {
		if (queues[q].used)
			continue;
		queues[q].ring = (uint8_t *)(uintptr_t)a->ring_base_address;
		queues[q].ring_packets = a->ring_size / 64;
		queues[q].wptr = (volatile uint64_t *)(uintptr_t)a->write_pointer_address;
		queues[q].rptr = (volatile uint64_t *)(uintptr_t)a->read_pointer_address;
		queues[q].used = queues[q].ring_packets != 0;
		queues[q].hang = listed(emu.dispatch_hang, emu.ndispatch_hang, a->gpu_id);
		pthread_mutex_unlock(&queues_lock);
		a->queue_id = (uint32_t)q;
		/* KFD_MMAP_TYPE_DOORBELL with the GPU's id, as kfd_ioctl_create_queue encodes it. */
		a->doorbell_offset = (3ULL << 62) | ((uint64_t)a->gpu_id << 46) | ((uint64_t)q * 8);
		trace("queue %d created: %llu packets", q, (unsigned long long)queues[q].ring_packets);
		return 0;
	}
	pthread_mutex_unlock(&queues_lock);
	errno = ENOMEM;
	return -1;
}

/* ---- KFD ioctls ---- */

/* The flat apertures kfd_init_apertures_v9 gives every gfx9-and-later GPU. */
static void aperture(struct kfd_process_device_apertures *ap, unsigned gpu_id)
{
	memset(ap, 0, sizeof *ap);
	ap->lds_base = 1ULL << 48;
	ap->lds_limit = (1ULL << 48) + 0xFFFFFFFFULL;
	ap->scratch_base = 2ULL << 48;
	ap->scratch_limit = (2ULL << 48) + 0xFFFFFFFFULL;
	ap->gpuvm_base = 1ULL << 16;
	ap->gpuvm_limit = (1ULL << 47) - 1;
	ap->gpu_id = gpu_id;
}

/* As kfd_ioctl_get_clock_counters: raw monotonic for the CPU, boot time at 1 GHz for the system;
 * the GPU counter advances with time like a real one. */
static int clock_counters(struct kfd_ioctl_get_clock_counters_args *a)
{
	/* A GPU the device cgroup denies reads 0 (kfd_ioctl_get_clock_counters finds no device for
	 * the process). */
	if (listed(emu.hidden, emu.nhidden, a->gpu_id))
		a->gpu_clock_counter = 0;
	else
		a->gpu_clock_counter = now_ns(CLOCK_MONOTONIC_RAW) / 10;
	a->cpu_clock_counter = now_ns(CLOCK_MONOTONIC_RAW);
	a->system_clock_counter = now_ns(CLOCK_BOOTTIME);
	a->system_clock_freq = 1000000000ULL;
	return 0;
}

/* ROCm 1.6's own kernel (ROCK roc-1.6.x; ROCT-Thunk-Interface roc-1.6.0 include/linux/kfd_ioctl.h,
 * interface 1.2, AMDKFD_COMMAND_END 0x21) numbered its ioctls before upstream did, and its
 * kfd_ioctl dispatches on _IOC_NR alone, replacing the caller's request with the table's. So a
 * request is what its number was there, whatever the caller meant: upstream's
 * GET_PROCESS_APERTURES_NEW (0x14) arrives as UNMAP_MEMORY_FROM_GPU. Only the numbers whose
 * meaning is the same in both tables (0x01, 0x05, 0x06), and the refusals of 0x14 and 0x15 that
 * current libhsakmt meets, are answered. */
/* What that kfd_ioctl hands the handler: the caller's _IOC_SIZE bytes, zero-filled up to the
 * table's size (the caller's own struct may be shorter than the table's). */
static void roc16_args(unsigned long req, const void *arg, void *kdata, size_t size)
{
	size_t usize = _IOC_SIZE(req);
	memset(kdata, 0, size);
	memcpy(kdata, arg, usize < size ? usize : size);
}

static int roc16_known_gpu(unsigned gpu_id)
{
	for (int i = 0; i < emu.nnodes; i++)
		if (gpu_id && emu.nodes[i].gpu_id == gpu_id)
			return 1;
	return 0;
}

static int roc16_kfd_ioctl(unsigned long req, void *arg)
{
	switch (_IOC_NR(req)) {
	case 0x01: { /* GET_VERSION: the same arguments in both tables */
		struct kfd_ioctl_get_version_args *a = arg;
		a->major_version = emu.kfd_major_version;
		a->minor_version = emu.kfd_minor_version;
		return 0;
	}
	case 0x05: /* GET_CLOCK_COUNTERS: the same arguments in both tables */
		return clock_counters(arg);
	case 0x06: {
		/* GET_PROCESS_APERTURES, the fixed-size form both tables keep (libhsakmt falls back to
		 * it when GET_PROCESS_APERTURES_NEW fails): at most NUM_OF_SUPPORTED_GPUS GPUs. */
		struct kfd_ioctl_get_process_apertures_args *a = arg;
		uint32_t k = 0;
		for (int i = 0; i < emu.nnodes && k < NUM_OF_SUPPORTED_GPUS; i++)
			if (emu.nodes[i].gpu_id && !listed(emu.hidden, emu.nhidden, emu.nodes[i].gpu_id))
				aperture(&a->process_apertures[k++], emu.nodes[i].gpu_id);
		a->num_of_nodes = k;
		return 0;
	}
	case 0x14: {
		/* UNMAP_MEMORY_FROM_GPU: its arguments start with the u64 handle whose upper half is
		 * the gpu_id (GET_GPU_ID). kfd_ioctl_unmap_memory_from_gpu begins with
		 * kfd_device_by_id(GET_GPU_ID(args->handle)) and returns -EINVAL when that finds no
		 * device; a known device then has no buffer under the handle, since nothing here was
		 * ever allocated, which is EINVAL as well. A caller meaning GET_PROCESS_APERTURES_NEW
		 * passes its buffer pointer there: 0 on the first, counting call. */
		struct { uint64_t handle, device_ids_array_ptr; uint32_t device_ids_array_size, pad; } a;
		roc16_args(req, arg, &a, sizeof a);
		unsigned gpu_id = (unsigned)(a.handle >> 32);
		trace("roc-1.6 UNMAP_MEMORY_FROM_GPU gpu_id %u: %s, EINVAL", gpu_id,
		      roc16_known_gpu(gpu_id) ? "no such buffer" : "no such device");
		errno = EINVAL;
		return -1;
	}
	case 0x15: {
		/* ALLOC_MEMORY_OF_SCRATCH (upstream's ACQUIRE_VM, 8 bytes, arrives here): its
		 * kfd_ioctl_alloc_scratch_memory returns -EINVAL for size 0 and for a gpu_id that names
		 * no device, before anything else. A real request past both is not emulated. */
		struct { uint64_t va_addr, size; uint32_t gpu_id, pad; } a;
		roc16_args(req, arg, &a, sizeof a);
		trace("roc-1.6 ALLOC_MEMORY_OF_SCRATCH size %llu gpu_id %u: %s, EINVAL",
		      (unsigned long long)a.size, a.gpu_id,
		      !a.size ? "size 0" : !roc16_known_gpu(a.gpu_id) ? "no such device" : "not emulated");
		errno = EINVAL;
		return -1;
	}
	}
	/* nr >= AMDKFD_COMMAND_END (0x21) is EINVAL in kfd_ioctl; every other number is an ioctl
	 * of that kernel the emulator does not answer (strict: EINVAL, named under the trace). */
	trace("roc-1.6 kfd ioctl nr %#lx: %s, EINVAL", (unsigned long)_IOC_NR(req),
	      _IOC_NR(req) >= 0x21 ? "beyond the table" : "not emulated");
	errno = EINVAL;
	return -1;
}

static int kfd_ioctl(unsigned long req, void *arg)
{
	if (emu.roc16_numbering)
		return roc16_kfd_ioctl(req, arg);
	switch (req) {
	case AMDKFD_IOC_GET_VERSION: {
		struct kfd_ioctl_get_version_args *a = arg;
		a->major_version = emu.kfd_major_version;
		a->minor_version = emu.kfd_minor_version;
		return 0;
	}
	case AMDKFD_IOC_GET_PROCESS_APERTURES_NEW: {
		struct kfd_ioctl_get_process_apertures_new_args *a = arg;
		uint32_t count = 0;
		for (int i = 0; i < emu.nnodes; i++)
			if (emu.nodes[i].gpu_id && !listed(emu.hidden, emu.nhidden, emu.nodes[i].gpu_id))
				count++;
		if (!a->kfd_process_device_apertures_ptr || !a->num_of_nodes) {
			a->num_of_nodes = count;
			return 0;
		}
		struct kfd_process_device_apertures *ap =
			(void *)(uintptr_t)a->kfd_process_device_apertures_ptr;
		uint32_t k = 0;
		for (int i = 0; i < emu.nnodes && k < a->num_of_nodes; i++) {
			/* kfd_init_apertures leaves out the GPUs the device cgroup denies. */
			if (!emu.nodes[i].gpu_id || listed(emu.hidden, emu.nhidden, emu.nodes[i].gpu_id))
				continue;
			aperture(&ap[k++], emu.nodes[i].gpu_id);
		}
		a->num_of_nodes = k;
		return 0;
	}
	case AMDKFD_IOC_ACQUIRE_VM:
	case AMDKFD_IOC_SET_MEMORY_POLICY:
	case AMDKFD_IOC_FREE_MEMORY_OF_GPU:
	case AMDKFD_IOC_SET_TRAP_HANDLER:
	case AMDKFD_IOC_SET_SCRATCH_BACKING_VA:
		return 0;
	case AMDKFD_IOC_GET_CLOCK_COUNTERS:
		return clock_counters(arg);
	case AMDKFD_IOC_SET_XNACK_MODE: {
		struct kfd_ioctl_set_xnack_mode_args *a = arg;
		if (a->xnack_enabled < 0)
			a->xnack_enabled = 0;
		return 0;
	}
	case AMDKFD_IOC_CREATE_QUEUE:
		return create_queue(arg);
	case AMDKFD_IOC_DESTROY_QUEUE: {
		uint32_t id = ((struct kfd_ioctl_destroy_queue_args *)arg)->queue_id;
		pthread_mutex_lock(&queues_lock);
		if (id < MAX_QUEUES)
			queues[id].used = 0;
		pthread_mutex_unlock(&queues_lock);
		return 0;
	}
	case AMDKFD_IOC_UPDATE_QUEUE:
	case AMDKFD_IOC_SET_CU_MASK:
		return 0;
	case AMDKFD_IOC_AVAILABLE_MEMORY: {
		/* Nothing allocated on an emulated GPU: all of its captured memory banks. Interfaces
		 * before 1.9 have no such ioctl (kfd_ioctl: an unknown nr is EINVAL). */
		struct kfd_ioctl_get_available_memory_args *a = arg;
		if (emu.kfd_major_version == 1 && emu.kfd_minor_version < 9) {
			errno = EINVAL;
			return -1;
		}
		for (int i = 0; i < emu.nnodes; i++)
			if (emu.nodes[i].gpu_id && emu.nodes[i].gpu_id == a->gpu_id) {
				a->available = emu.nodes[i].bank_bytes;
				return 0;
			}
		errno = EINVAL;
		return -1;
	}
	case AMDKFD_IOC_GET_TILE_CONFIG: {
		/* No tiling registers in a capture: the counts amdgpu_amdkfd_get_tile_config gives, zeroed. */
		struct kfd_ioctl_get_tile_config_args *a = arg;
		if (a->tile_config_ptr && a->num_tile_configs)
			memset((void *)(uintptr_t)a->tile_config_ptr, 0, a->num_tile_configs * 4);
		if (a->macro_tile_config_ptr && a->num_macro_tile_configs)
			memset((void *)(uintptr_t)a->macro_tile_config_ptr, 0, a->num_macro_tile_configs * 4);
		a->gb_addr_config = 0;
		a->num_banks = 0;
		a->num_ranks = 0;
		return 0;
	}
	case AMDKFD_IOC_CREATE_EVENT:
		return create_event(arg);
	case AMDKFD_IOC_DESTROY_EVENT: {
		struct kfd_ioctl_destroy_event_args *a = arg;
		if (a->event_id && a->event_id < MAX_EVENTS)
			events[a->event_id].used = 0;
		return 0;
	}
	case AMDKFD_IOC_SET_EVENT:
		return set_event(((struct kfd_ioctl_set_event_args *)arg)->event_id, 1);
	case AMDKFD_IOC_RESET_EVENT:
		return set_event(((struct kfd_ioctl_reset_event_args *)arg)->event_id, 0);
	case AMDKFD_IOC_WAIT_EVENTS:
		return wait_events(arg);
	case AMDKFD_IOC_ALLOC_MEMORY_OF_GPU: {
		/* A handle and an mmap offset; the memory itself is whatever mmap of the node gives. */
		static uint64_t next = 1;
		struct kfd_ioctl_alloc_memory_of_gpu_args *a = arg;
		uint64_t n = __atomic_fetch_add(&next, 1, __ATOMIC_RELAXED);
		a->handle = ((uint64_t)a->gpu_id << 32) | n;
		a->mmap_offset = n << 12;
		return 0;
	}
	case AMDKFD_IOC_MAP_MEMORY_TO_GPU: {
		struct kfd_ioctl_map_memory_to_gpu_args *a = arg;
		a->n_success = a->n_devices;
		return 0;
	}
	case AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU: {
		struct kfd_ioctl_unmap_memory_from_gpu_args *a = arg;
		a->n_success = a->n_devices;
		return 0;
	}
	}
	trace("kfd ioctl %#lx (nr %#lx): not emulated, EINVAL", req, (unsigned long)_IOC_NR(req));
	errno = EINVAL;
	return -1;
}

/* ---- DRM ioctls ---- */

static int copy_string(char *dst, __kernel_size_t *len, const char *src)
{
	size_t n = strlen(src);
	if (dst && *len)
		memcpy(dst, src, n < *len ? n : *len);
	*len = n;
	return 0;
}

static int drm_ioctl(unsigned minor, unsigned long req, void *arg)
{
	const struct node *n = node_by_minor(minor);
	switch (req) {
	case DRM_IOCTL_VERSION: {
		struct drm_version *v = arg;
		v->version_major = 3;
		v->version_minor = 42;
		v->version_patchlevel = 0;
		copy_string(v->name, &v->name_len, "amdgpu");
		copy_string(v->date, &v->date_len, "20150101");
		copy_string(v->desc, &v->desc_len, "AMD GPU");
		return 0;
	}
	case DRM_IOCTL_AMDGPU_INFO: {
		struct drm_amdgpu_info *q = arg;
		void *out = (void *)(uintptr_t)q->return_pointer;
		if (!out) {
			errno = EINVAL;
			return -1;
		}
		memset(out, 0, q->return_size);
		switch (q->query) {
		case AMDGPU_INFO_ACCEL_WORKING:
			if (q->return_size >= 4)
				*(uint32_t *)out = 1;
			return 0;
		case AMDGPU_INFO_READ_MMR_REG:
			return 0;
		case AMDGPU_INFO_DEV_INFO: {
			struct drm_amdgpu_info_device info;
			memset(&info, 0, sizeof info);
			if (n) {
				info.device_id = n->device_id;
				/* libdrm names the GPU by (device id, PCI revision) from amdgpu.ids. */
				info.pci_rev = n->pci_rev;
				info.num_shader_engines = n->simd_arrays_per_engine
					? n->array_count / n->simd_arrays_per_engine : n->array_count;
				info.num_shader_arrays_per_engine = n->simd_arrays_per_engine;
				info.cu_active_number = n->simd_per_cu ? n->simd_count / n->simd_per_cu : 0;
				info.num_cu_per_sh = n->cu_per_simd_array;
				info.max_engine_clock = (uint64_t)n->max_engine_clk * 1000;
				info.wave_front_size = 64;
			}
			info.virtual_address_offset = 1ULL << 21;
			info.virtual_address_max = 1ULL << 47;
			info.virtual_address_alignment = 4096;
			info.gart_page_size = 4096;
			memcpy(out, &info, q->return_size < sizeof info ? q->return_size : sizeof info);
			return 0;
		}
		}
		trace("amdgpu info query %#x: not emulated, EINVAL", q->query);
		errno = EINVAL;
		return -1;
	}
	}
	trace("drm ioctl %#lx (nr %#lx) on renderD%u: not emulated, EINVAL", req,
	      (unsigned long)_IOC_NR(req), minor);
	errno = EINVAL;
	return -1;
}

/* ---- the interposed libc functions ---- */

static int open_common(const char *path, int flags, mode_t mode, int dirfd, int at)
{
	pthread_once(&once, init);
	enum kind kind;
	unsigned minor;
	if (is_emulated_path(path, &kind, &minor))
		return emulated_open(path, flags, kind, minor);
	if (emu.ready && !strcmp(path, "/proc/modules")) {
		int fd = synth_modules();
		if (fd != -2)
			return fd;
	}
	char mapped[PATH_MAX];
	const char *p = redirect(path, mapped, sizeof mapped);
	if (p)
		path = p;
	if (at)
		return (int)syscall(SYS_openat, dirfd, path, flags, mode);
	return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}

#define MODE_ARG(flags) \
	mode_t mode = 0; \
	if ((flags) & (O_CREAT | O_TMPFILE)) { \
		va_list ap; \
		va_start(ap, flags); \
		mode = va_arg(ap, mode_t); \
		va_end(ap); \
	}

int open(const char *path, int flags, ...)
{
	MODE_ARG(flags);
	return open_common(path, flags, mode, AT_FDCWD, 0);
}
int open64(const char *path, int flags, ...)
{
	MODE_ARG(flags);
	return open_common(path, flags, mode, AT_FDCWD, 0);
}
int __open_2(const char *path, int flags)
{
	return open_common(path, flags, 0, AT_FDCWD, 0);
}
int __open64_2(const char *path, int flags)
{
	return open_common(path, flags, 0, AT_FDCWD, 0);
}
int openat(int dirfd, const char *path, int flags, ...)
{
	MODE_ARG(flags);
	return open_common(path, flags, mode, dirfd, 1);
}
int openat64(int dirfd, const char *path, int flags, ...)
{
	MODE_ARG(flags);
	return open_common(path, flags, mode, dirfd, 1);
}

/* fopen and fopen64 open inside libc, past the open hooks: both come here with their real one. */
static FILE *open_stream(FILE *(*real)(const char *, const char *), const char *path, const char *m)
{
	pthread_once(&once, init);
	if (emu.ready && !strcmp(path, "/proc/modules")) {
		int fd = synth_modules();
		if (fd >= 0)
			return fdopen(fd, "r");
	}
	char mapped[PATH_MAX];
	const char *p = redirect(path, mapped, sizeof mapped);
	return real(p ? p : path, m);
}
FILE *fopen(const char *path, const char *m)
{
	REAL(fopen);
	return open_stream(real_fopen, path, m);
}
FILE *fopen64(const char *path, const char *m)
{
	REAL(fopen64);
	return open_stream(real_fopen64, path, m);
}

DIR *opendir(const char *path)
{
	REAL(opendir);
	pthread_once(&once, init);
	char mapped[PATH_MAX];
	const char *p = redirect_as(path, mapped, sizeof mapped, 1);
	return real_opendir(p ? p : path);
}

int access(const char *path, int mode)
{
	pthread_once(&once, init);
	enum kind kind;
	unsigned minor;
	if (is_emulated_path(path, &kind, &minor)) {
		const struct device *d = device_for(path);
		if (!d) {
			errno = ENOENT;
			return -1;
		}
		int flags = (mode & W_OK) ? ((mode & R_OK) ? O_RDWR : O_WRONLY) : O_RDONLY;
		if (mode != F_OK && !permitted(d, flags)) {
			errno = EACCES;
			return -1;
		}
		return 0;
	}
	char mapped[PATH_MAX];
	const char *p = redirect(path, mapped, sizeof mapped);
	return (int)syscall(SYS_access, p ? p : path, mode);
}

ssize_t readlink(const char *path, char *buf, size_t size)
{
	pthread_once(&once, init);
	char mapped[PATH_MAX];
	const char *p = redirect(path, mapped, sizeof mapped);
	return syscall(SYS_readlink, p ? p : path, buf, size);
}

char *realpath(const char *path, char *resolved)
{
	REAL(realpath);
	pthread_once(&once, init);
	char mapped[PATH_MAX];
	const char *p = redirect(path, mapped, sizeof mapped);
	return real_realpath(p ? p : path, resolved);
}

static int stat_path(const char *path, struct stat *st, int nofollow)
{
	pthread_once(&once, init);
	enum kind kind;
	unsigned minor;
	if (is_emulated_path(path, &kind, &minor)) {
		const struct device *d = device_for(path);
		if (!d) {
			errno = ENOENT;
			return -1;
		}
		fill_stat(st, kind, minor, d);
		return 0;
	}
	char mapped[PATH_MAX];
	const char *p = redirect(path, mapped, sizeof mapped);
	return (int)syscall(SYS_newfstatat, AT_FDCWD, p ? p : path, st, nofollow ? AT_SYMLINK_NOFOLLOW : 0);
}

static int stat_fd(int fd, struct stat *st)
{
	pthread_once(&once, init);
	enum kind k = fd_kind(fd);
	if (k != NONE) {
		fill_stat(st, k, fds[fd].minor, device_of_fd(fd));
		return 0;
	}
	return (int)syscall(SYS_fstat, fd, st);
}

int stat(const char *path, struct stat *st) { return stat_path(path, st, 0); }
int stat64(const char *path, struct stat64 *st) { return stat_path(path, (struct stat *)st, 0); }
int lstat(const char *path, struct stat *st) { return stat_path(path, st, 1); }
int lstat64(const char *path, struct stat64 *st) { return stat_path(path, (struct stat *)st, 1); }
int fstat(int fd, struct stat *st) { return stat_fd(fd, st); }
int fstat64(int fd, struct stat64 *st) { return stat_fd(fd, (struct stat *)st); }
int __xstat(int v, const char *path, struct stat *st) { (void)v; return stat_path(path, st, 0); }
int __xstat64(int v, const char *path, struct stat64 *st) { (void)v; return stat_path(path, (struct stat *)st, 0); }
int __lxstat(int v, const char *path, struct stat *st) { (void)v; return stat_path(path, st, 1); }
int __lxstat64(int v, const char *path, struct stat64 *st) { (void)v; return stat_path(path, (struct stat *)st, 1); }
int __fxstat(int v, int fd, struct stat *st) { (void)v; return stat_fd(fd, st); }
int __fxstat64(int v, int fd, struct stat64 *st) { (void)v; return stat_fd(fd, (struct stat *)st); }

int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	if (path[0] == '/')
		return stat_path(path, st, flags & AT_SYMLINK_NOFOLLOW);
	if (!path[0] && (flags & AT_EMPTY_PATH))
		return stat_fd(dirfd, st);
	return (int)syscall(SYS_newfstatat, dirfd, path, st, flags);
}
int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags)
{
	return fstatat(dirfd, path, (struct stat *)st, flags);
}

int close(int fd)
{
	if (fd >= 0 && fd < MAX_FDS)
		fds[fd].kind = NONE;
	return (int)syscall(SYS_close, fd);
}

static int track_dup(int old, int fd)
{
	if (fd >= 0 && fd < MAX_FDS && old >= 0 && old < MAX_FDS)
		fds[fd] = fds[old];
	return fd;
}

int dup(int old) { return track_dup(old, (int)syscall(SYS_dup, old)); }
int dup2(int old, int new) { return track_dup(old, (int)syscall(SYS_dup2, old, new)); }
int dup3(int old, int new, int flags) { return track_dup(old, (int)syscall(SYS_dup3, old, new, flags)); }

int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	va_start(ap, cmd);
	unsigned long arg = va_arg(ap, unsigned long);
	va_end(ap);
	int r = (int)syscall(SYS_fcntl, fd, cmd, arg);
	if ((cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) && r >= 0)
		track_dup(fd, r);
	return r;
}
int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	va_start(ap, cmd);
	unsigned long arg = va_arg(ap, unsigned long);
	va_end(ap);
	return fcntl(fd, cmd, arg);
}

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	pthread_once(&once, init);
	switch (fd_kind(fd)) {
	case KFD:
		trace("kfd ioctl nr %#lx", (unsigned long)_IOC_NR(req));
		return kfd_ioctl(req, arg);
	case RENDER:
		trace("drm ioctl nr %#lx on renderD%u", (unsigned long)_IOC_NR(req), fds[fd].minor);
		return drm_ioctl(fds[fd].minor, req, arg);
	case NONE:
		break;
	}
	return (int)syscall(SYS_ioctl, fd, req, arg);
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	REAL(mmap);
	if (fd_kind(fd) != NONE) {
		/* Doorbells, queue memory, event pages: ordinary shared memory the process can touch. */
		trace("mmap of emulated fd %d, %zu bytes", fd, len);
		return real_mmap(addr, len, prot, (flags & ~MAP_TYPE) | MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	}
	return real_mmap(addr, len, prot, flags, fd, off);
}
void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mmap(addr, len, prot, flags, fd, off);
}

int statx(int dirfd, const char *path, int flags, unsigned int mask, struct statx *stx)
{
	pthread_once(&once, init);
	enum kind kind;
	unsigned minor;
	int fd_only = !path[0] && (flags & AT_EMPTY_PATH);
	if ((fd_only && fd_kind(dirfd) != NONE) || (path[0] == '/' && is_emulated_path(path, &kind, &minor))) {
		struct stat st;
		int r = fd_only ? stat_fd(dirfd, &st) : stat_path(path, &st, flags & AT_SYMLINK_NOFOLLOW);
		if (r)
			return r;
		memset(stx, 0, sizeof *stx);
		stx->stx_mask = STATX_BASIC_STATS;
		stx->stx_mode = st.st_mode;
		stx->stx_uid = st.st_uid;
		stx->stx_gid = st.st_gid;
		stx->stx_nlink = 1;
		stx->stx_blksize = 4096;
		stx->stx_rdev_major = major(st.st_rdev);
		stx->stx_rdev_minor = minor(st.st_rdev);
		return 0;
	}
	char mapped[PATH_MAX];
	const char *p = path[0] == '/' ? redirect(path, mapped, sizeof mapped) : NULL;
	return (int)syscall(SYS_statx, dirfd, p ? p : path, flags, mask, stx);
}
