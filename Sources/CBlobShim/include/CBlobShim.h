#ifndef CBLOBSHIM_H
#define CBLOBSHIM_H

// Plain wrappers for Linux calls that Swift's Glibc module does not export.
// The header stays free of _GNU_SOURCE (defining it here conflicts with the Glibc
// module); the .c file defines it before its own includes.

#include <stdint.h>
#include <sys/types.h>

/// O_NOATIME (needs _GNU_SOURCE, so not visible to Swift's Glibc module).
int cblob_o_noatime(void);

/// openat2(2) at AT_FDCWD with RESOLVE_CACHED: opens `path` (O_CLOEXEC added) only if every
/// component is already in the kernel's lookup cache, so it never waits for the disk; otherwise
/// -1 with errno EAGAIN. Kernels before 5.12 give ENOSYS (no openat2) or EINVAL (no RESOLVE_CACHED).
int cblob_open_cached(const char *path, int flags);

/// preadv2(2) with RWF_NOWAIT: reads only what is in the page cache; -1 with errno EAGAIN when
/// nothing is (a short count when only part is), EOPNOTSUPP where the filesystem cannot tell.
long cblob_pread_nowait(int fd, void *buffer, unsigned long count, int64_t offset);

/// syncfs(2): commit the whole filesystem that holds fd. Returns 0 or -1 with errno set.
int cblob_syncfs(int fd);

/// getsockopt(SO_PEERCRED) on a connected Unix socket. Returns 0 or -1 with errno set.
int cblob_peer_credentials(int fd, int32_t *pid, uint32_t *uid, uint32_t *gid);

/// accept4(2) with SOCK_CLOEXEC and, if `nonblocking`, SOCK_NONBLOCK. Returns the fd or -1 with errno set.
int cblob_accept(int fd, int nonblocking);

/// epoll_create1(EPOLL_CLOEXEC).
int cblob_epoll_create(void);

/// epoll_ctl(2) with EPOLL_CTL_ADD (op 1), EPOLL_CTL_DEL (2) or EPOLL_CTL_MOD (3); `data` comes back with the event.
int cblob_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data);

/// One ready event, unpacked from the kernel's packed struct epoll_event.
typedef struct {
    uint32_t events;
    uint64_t data;
} cblob_epoll_event;

/// epoll_wait(2) into `out` (at most `capacity`), unpacking each event.
int cblob_epoll_wait(int epfd, cblob_epoll_event *out, int capacity, int timeout_ms);

/// Event bits.
uint32_t cblob_epollin(void);
uint32_t cblob_epollout(void);
uint32_t cblob_epollrdhup(void);
uint32_t cblob_epollhup(void);
uint32_t cblob_epollerr(void);
uint32_t cblob_epollet(void);

/// eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK): a wake-up channel for event loops.
int cblob_eventfd(void);

#endif
