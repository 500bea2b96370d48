/*
 * ptrace-xsave-shim: LD_PRELOAD wrapper that lets Debian's user-mode-linux
 * run on hosts whose XSAVE area is larger than the one UML was built for.
 *
 * Copyright: tapeops.qualify contributors
 * GNU General Public License v3.0+ (see COPYING or
 * https://www.gnu.org/licenses/gpl-3.0.txt)
 *
 * The problem: UML saves and restores the floating-point state of its guest
 * processes with PTRACE_GETREGSET / PTRACE_SETREGSET (NT_X86_XSTATE) using an
 * iovec of its compiled-in size.  GETREGSET with a short buffer is fine (the
 * kernel truncates), but SETREGSET is rejected unless the buffer covers the
 * host's full xstate size (11008 bytes with AVX-512 + AMX), and UML panics
 * with "userspace - ptrace set fp regs failed, errno = 14".
 *
 * The fix: for GETREGSET / SETREGSET of NT_X86_XSTATE with a short buffer,
 * keep a full-size shadow buffer per UML buffer address (UML keeps one per
 * guest thread).  GET reads the full state into the shadow and copies the
 * short part out.  SET copies the short part into the shadow (seeded from the
 * task's live state on first use) and sets the full size.  The full size is
 * learned once by a GETREGSET with a large buffer.  Where the sizes already
 * match, every call goes straight to libc.
 *
 * Build: gcc -O2 -shared -fPIC -o shim.so ptrace-xsave-shim.c -ldl
 * Use:   LD_PRELOAD=shim.so linux ...
 * Debug: TAPEOPS_SHIM_DEBUG=1 prints one line per shadowed call to stderr.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/uio.h>

#ifndef NT_X86_XSTATE
#define NT_X86_XSTATE 0x202
#endif
#ifndef PTRACE_GETREGSET
#define PTRACE_GETREGSET 0x4204
#endif
#ifndef PTRACE_SETREGSET
#define PTRACE_SETREGSET 0x4205
#endif

#define PROBE_SIZE (64 * 1024)
#define MAX_SHADOWS 4096

typedef long (*ptrace_fn)(int, pid_t, void *, void *);

struct shadow {
	void *key;          /* UML's buffer address */
	unsigned char *buf; /* full-size copy */
	int seeded;         /* holds a real task state */
};

static ptrace_fn real_ptrace;
static size_t full_size;     /* 0 = not learned yet */
static struct shadow shadows[MAX_SHADOWS];
static int nshadows;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int debug = -1;

static void dbg(const char *fmt, ...)
{
	va_list ap;

	if (debug < 0)
		debug = getenv("TAPEOPS_SHIM_DEBUG") != NULL;
	if (!debug)
		return;
	va_start(ap, fmt);
	fputs("ptrace-xsave-shim: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static void resolve(void)
{
	if (!real_ptrace)
		real_ptrace = (ptrace_fn)dlsym(RTLD_NEXT, "ptrace");
}

/* Learn the host's full xstate size from a traced task (lock held). */
static size_t learn_full_size(pid_t pid)
{
	struct iovec iov;
	void *probe;

	if (full_size)
		return full_size;
	probe = calloc(1, PROBE_SIZE);
	if (!probe)
		return 0;
	iov.iov_base = probe;
	iov.iov_len = PROBE_SIZE;
	if (real_ptrace(PTRACE_GETREGSET, pid, (void *)(uintptr_t)NT_X86_XSTATE, &iov) == 0) {
		full_size = iov.iov_len;
		dbg("full xstate size %zu bytes", full_size);
	}
	free(probe);
	return full_size;
}

static struct shadow *shadow_for(void *key)
{
	int i;

	for (i = 0; i < nshadows; i++)
		if (shadows[i].key == key)
			return &shadows[i];
	if (nshadows == MAX_SHADOWS)
		return NULL;
	shadows[nshadows].buf = calloc(1, full_size);
	if (!shadows[nshadows].buf)
		return NULL;
	shadows[nshadows].key = key;
	shadows[nshadows].seeded = 0;
	return &shadows[nshadows++];
}

static long shadowed(int request, pid_t pid, struct iovec *user)
{
	struct iovec iov;
	struct shadow *sh;
	size_t short_len = user->iov_len;
	long ret;

	sh = shadow_for(user->iov_base);
	if (!sh) {
		errno = ENOMEM;
		return -1;
	}
	iov.iov_base = sh->buf;
	iov.iov_len = full_size;
	if (request == PTRACE_GETREGSET) {
		ret = real_ptrace(PTRACE_GETREGSET, pid, (void *)(uintptr_t)NT_X86_XSTATE, &iov);
		if (ret == 0) {
			sh->seeded = 1;
			memcpy(user->iov_base, sh->buf, short_len < iov.iov_len ? short_len : iov.iov_len);
			user->iov_len = short_len < iov.iov_len ? short_len : iov.iov_len;
		}
		return ret;
	}
	if (!sh->seeded) {
		ret = real_ptrace(PTRACE_GETREGSET, pid, (void *)(uintptr_t)NT_X86_XSTATE, &iov);
		if (ret != 0)
			return ret;
		sh->seeded = 1;
		iov.iov_len = full_size;
	}
	memcpy(sh->buf, user->iov_base, short_len);
	dbg("SETREGSET pid %d: %zu of %zu bytes via shadow", (int)pid, short_len, full_size);
	return real_ptrace(PTRACE_SETREGSET, pid, (void *)(uintptr_t)NT_X86_XSTATE, &iov);
}

long ptrace(enum __ptrace_request request, ...)
{
	va_list ap;
	pid_t pid;
	void *addr, *data;
	long ret;
	struct iovec *iov;

	va_start(ap, request);
	pid = va_arg(ap, pid_t);
	addr = va_arg(ap, void *);
	data = va_arg(ap, void *);
	va_end(ap);

	resolve();
	if (!real_ptrace) {
		errno = ENOSYS;
		return -1;
	}
	iov = (struct iovec *)data;
	if ((request != PTRACE_GETREGSET && request != PTRACE_SETREGSET) ||
	    (uintptr_t)addr != NT_X86_XSTATE || iov == NULL)
		return real_ptrace(request, pid, addr, data);

	pthread_mutex_lock(&lock);
	if (!learn_full_size(pid) || iov->iov_len >= full_size) {
		pthread_mutex_unlock(&lock);
		return real_ptrace(request, pid, addr, data);
	}
	ret = shadowed(request, pid, iov);
	pthread_mutex_unlock(&lock);
	return ret;
}
