/*
 * tapeops.qualify lab: let real sg tools (mtx, sg3_utils) talk to an emulated
 * SCSI device without a kernel, for tests on any machine.
 *
 * Copyright: tapeops.qualify contributors
 * GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
 *
 * An LD_PRELOAD library. When the program opens the path in $SGSHIM_PATH, it
 * gets a connected Unix socket to $SGSHIM_SOCKET instead (served by
 * lab/tapedrive/sgshim.py, which hands each command to a device's
 * execute(cdb, data_out)). On that descriptor:
 *   ioctl SG_IO                 -> one request/response on the socket
 *   ioctl SG_GET_VERSION_NUM    -> 30536 (Linux sg 3.5.36)
 *   ioctl SG_SET/GET_TIMEOUT, SG_GET/SET_RESERVED_SIZE, SCSI_IOCTL_GET_IDLUN,
 *         SG_GET_SCSI_ID        -> plausible answers
 *   fstat / stat of the path    -> a character device, major 21 (sg)
 * Everything else goes to libc. Nothing here is used by the lab guests: the
 * guests run the real kernel sg driver over LIO TCMU.
 *
 * Wire format (little-endian, host order), per SG_IO:
 *   request:  u32 cdb_len, i32 dxfer_direction, u32 dxfer_len, then the CDB,
 *             then dxfer_len bytes of data-out when the direction is TO_DEV
 *   response: u32 status, u32 data_in_len, u32 sense_len, data-in, sense
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>
#include <scsi/sg.h>

#define SHIM_MAX_FD 1024
#define SCSI_IOCTL_GET_IDLUN_NR 0x5382
#define SG_MAJOR 21

static unsigned char shim_fds[SHIM_MAX_FD];

static int is_shim_path(const char *path)
{
	const char *want = getenv("SGSHIM_PATH");
	return path && want && *want && strcmp(path, want) == 0;
}

static int is_shim_fd(int fd)
{
	return fd >= 0 && fd < SHIM_MAX_FD && shim_fds[fd];
}

static int shim_connect(void)
{
	const char *sock = getenv("SGSHIM_SOCKET");
	struct sockaddr_un sa;
	int fd;

	if (!sock || strlen(sock) >= sizeof(sa.sun_path)) {
		errno = ENOENT;
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	strcpy(sa.sun_path, sock);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || fd >= SHIM_MAX_FD) {
		int e = errno;
		close(fd);
		errno = fd >= SHIM_MAX_FD ? EMFILE : e;
		return -1;
	}
	shim_fds[fd] = 1;
	return fd;
}

/* --- open family --- */

typedef int (*open_fn)(const char *, int, ...);
typedef int (*openat_fn)(int, const char *, int, ...);

#define OPEN_WRAPPER(name)                                                   \
	int name(const char *path, int flags, ...)                           \
	{                                                                    \
		static open_fn real;                                         \
		mode_t mode = 0;                                             \
		if (flags & (O_CREAT | O_TMPFILE)) {                         \
			va_list ap;                                          \
			va_start(ap, flags);                                 \
			mode = va_arg(ap, mode_t);                           \
			va_end(ap);                                          \
		}                                                            \
		if (is_shim_path(path))                                      \
			return shim_connect();                               \
		if (!real)                                                   \
			real = (open_fn)dlsym(RTLD_NEXT, #name);             \
		return real(path, flags, mode);                              \
	}

#define OPENAT_WRAPPER(name)                                                 \
	int name(int dirfd, const char *path, int flags, ...)                \
	{                                                                    \
		static openat_fn real;                                       \
		mode_t mode = 0;                                             \
		if (flags & (O_CREAT | O_TMPFILE)) {                         \
			va_list ap;                                          \
			va_start(ap, flags);                                 \
			mode = va_arg(ap, mode_t);                           \
			va_end(ap);                                          \
		}                                                            \
		if (is_shim_path(path))                                      \
			return shim_connect();                               \
		if (!real)                                                   \
			real = (openat_fn)dlsym(RTLD_NEXT, #name);           \
		return real(dirfd, path, flags, mode);                       \
	}

OPEN_WRAPPER(open)
OPEN_WRAPPER(open64)
OPENAT_WRAPPER(openat)
OPENAT_WRAPPER(openat64)

int __open_2(const char *path, int flags)
{
	return open(path, flags);
}

int __open64_2(const char *path, int flags)
{
	return open64(path, flags);
}

int close(int fd)
{
	static int (*real)(int);

	if (!real)
		real = (int (*)(int))dlsym(RTLD_NEXT, "close");
	if (is_shim_fd(fd))
		shim_fds[fd] = 0;
	return real(fd);
}

/* --- stat family: the fake path and its descriptors look like an sg node --- */

static void fake_stat(struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_mode = S_IFCHR | 0660;
	st->st_rdev = makedev(SG_MAJOR, 250);
	st->st_nlink = 1;
	st->st_blksize = 4096;
}

int fstat(int fd, struct stat *st)
{
	static int (*real)(int, struct stat *);

	if (is_shim_fd(fd)) {
		fake_stat(st);
		return 0;
	}
	if (!real)
		real = (int (*)(int, struct stat *))dlsym(RTLD_NEXT, "fstat");
	return real(fd, st);
}

int fstat64(int fd, struct stat64 *st)
{
	static int (*real)(int, struct stat64 *);

	if (is_shim_fd(fd)) {
		fake_stat((struct stat *)st);
		return 0;
	}
	if (!real)
		real = (int (*)(int, struct stat64 *))dlsym(RTLD_NEXT, "fstat64");
	return real(fd, st);
}

int stat(const char *path, struct stat *st)
{
	static int (*real)(const char *, struct stat *);

	if (is_shim_path(path)) {
		fake_stat(st);
		return 0;
	}
	if (!real)
		real = (int (*)(const char *, struct stat *))dlsym(RTLD_NEXT, "stat");
	return real(path, st);
}

int stat64(const char *path, struct stat64 *st)
{
	static int (*real)(const char *, struct stat64 *);

	if (is_shim_path(path)) {
		fake_stat((struct stat *)st);
		return 0;
	}
	if (!real)
		real = (int (*)(const char *, struct stat64 *))dlsym(RTLD_NEXT, "stat64");
	return real(path, st);
}

/* --- SG_IO over the socket --- */

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int read_all(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = recv(fd, p, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int discard(int fd, size_t len)
{
	char buf[4096];

	while (len) {
		size_t n = len < sizeof(buf) ? len : sizeof(buf);
		if (read_all(fd, buf, n) < 0)
			return -1;
		len -= n;
	}
	return 0;
}

static int shim_sg_io(int fd, struct sg_io_hdr *h)
{
	uint32_t req[3], rsp[3];
	uint32_t got, sense_len, keep;
	int to_dev, from_dev;

	if (h->interface_id != 'S' || h->iovec_count != 0 || !h->cmdp) {
		errno = EINVAL;
		return -1;
	}
	to_dev = h->dxfer_direction == SG_DXFER_TO_DEV;
	from_dev = h->dxfer_direction == SG_DXFER_FROM_DEV || h->dxfer_direction == SG_DXFER_TO_FROM_DEV;
	req[0] = h->cmd_len;
	req[1] = (uint32_t)h->dxfer_direction;
	req[2] = (to_dev || from_dev) ? h->dxfer_len : 0;
	if (write_all(fd, req, sizeof(req)) < 0 || write_all(fd, h->cmdp, h->cmd_len) < 0)
		goto io_error;
	if (to_dev && h->dxfer_len && write_all(fd, h->dxferp, h->dxfer_len) < 0)
		goto io_error;
	if (read_all(fd, rsp, sizeof(rsp)) < 0)
		goto io_error;
	got = rsp[1];
	sense_len = rsp[2];
	keep = from_dev ? (got < h->dxfer_len ? got : h->dxfer_len) : 0;
	if (keep && read_all(fd, h->dxferp, keep) < 0)
		goto io_error;
	if (got > keep && discard(fd, got - keep) < 0)
		goto io_error;
	h->sb_len_wr = 0;
	if (sense_len) {
		uint32_t k = sense_len < h->mx_sb_len ? sense_len : h->mx_sb_len;
		if (k && h->sbp && read_all(fd, h->sbp, k) < 0)
			goto io_error;
		if (!(k && h->sbp))
			k = 0;
		if (sense_len > k && discard(fd, sense_len - k) < 0)
			goto io_error;
		h->sb_len_wr = (unsigned char)k;
	}
	h->status = (unsigned char)rsp[0];
	h->masked_status = (unsigned char)((rsp[0] >> 1) & 0x7f);
	h->msg_status = 0;
	h->host_status = 0;
	h->driver_status = h->sb_len_wr ? 0x08 /* DRIVER_SENSE */ : 0;
	h->resid = (to_dev || from_dev) ? (int)(h->dxfer_len - (from_dev ? keep : h->dxfer_len)) : 0;
	h->duration = 0;
	h->info = (h->status || h->sb_len_wr) ? SG_INFO_CHECK : SG_INFO_OK;
	return 0;
io_error:
	errno = EIO;
	return -1;
}

int ioctl(int fd, unsigned long req, ...)
{
	static int (*real)(int, unsigned long, void *);
	static int timeout = 60000;
	static int reserved = 32768;
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!is_shim_fd(fd)) {
		if (!real)
			real = (int (*)(int, unsigned long, void *))dlsym(RTLD_NEXT, "ioctl");
		return real(fd, req, arg);
	}
	switch (req) {
	case SG_IO:
		return shim_sg_io(fd, (struct sg_io_hdr *)arg);
	case SG_GET_VERSION_NUM:
		*(int *)arg = 30536;
		return 0;
	case SG_SET_TIMEOUT:
		timeout = *(int *)arg;
		return 0;
	case SG_GET_TIMEOUT:
		return timeout;
	case SG_GET_RESERVED_SIZE:
		*(int *)arg = reserved;
		return 0;
	case SG_SET_RESERVED_SIZE:
		reserved = *(int *)arg;
		return 0;
	case SCSI_IOCTL_GET_IDLUN_NR:
		((int *)arg)[0] = 0;
		((int *)arg)[1] = 0;
		return 0;
	case SG_GET_SCSI_ID:
		memset(arg, 0, sizeof(struct sg_scsi_id));
		((struct sg_scsi_id *)arg)->scsi_type = getenv("SGSHIM_TYPE") ? atoi(getenv("SGSHIM_TYPE")) : 0;
		return 0;
	default:
		errno = ENOTTY;
		return -1;
	}
}
