#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include "CBlobShim.h"

// From <linux/openat2.h>, spelled out so the shim builds against older kernel headers.
struct cblob_open_how {
    uint64_t flags;
    uint64_t mode;
    uint64_t resolve;
};
#define CBLOB_RESOLVE_CACHED 0x20
#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#ifndef RWF_NOWAIT
#define RWF_NOWAIT 0x00000008
#endif

int cblob_open_cached(const char *path, int flags) {
    struct cblob_open_how how = { .flags = (uint64_t)(unsigned)(flags | O_CLOEXEC), .mode = 0, .resolve = CBLOB_RESOLVE_CACHED };
    return (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
}

long cblob_pread_nowait(int fd, void *buffer, unsigned long count, int64_t offset) {
    struct iovec vector = { .iov_base = buffer, .iov_len = count };
    return (long)preadv2(fd, &vector, 1, (off_t)offset, RWF_NOWAIT);
}

int cblob_syncfs(int fd) { return syncfs(fd); }

int cblob_peer_credentials(int fd, int32_t *pid, uint32_t *uid, uint32_t *gid) {
    struct ucred cred;
    socklen_t length = sizeof(cred);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) != 0) return -1;
    *pid = cred.pid;
    *uid = cred.uid;
    *gid = cred.gid;
    return 0;
}

int cblob_accept(int fd, int nonblocking) {
    return accept4(fd, NULL, NULL, SOCK_CLOEXEC | (nonblocking ? SOCK_NONBLOCK : 0));
}

int cblob_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

int cblob_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data) {
    struct epoll_event event = { .events = events, .data.u64 = data };
    int kernel_op = op == 1 ? EPOLL_CTL_ADD : op == 2 ? EPOLL_CTL_DEL : EPOLL_CTL_MOD;
    return epoll_ctl(epfd, kernel_op, fd, &event);
}

int cblob_epoll_wait(int epfd, cblob_epoll_event *out, int capacity, int timeout_ms) {
    struct epoll_event events[256];
    if (capacity > 256) capacity = 256;
    int count = epoll_wait(epfd, events, capacity, timeout_ms);
    for (int i = 0; i < count; i++) {
        out[i].events = events[i].events;
        out[i].data = events[i].data.u64;
    }
    return count;
}

int cblob_o_noatime(void) { return O_NOATIME; }

uint32_t cblob_epollin(void) { return EPOLLIN; }
uint32_t cblob_epollout(void) { return EPOLLOUT; }
uint32_t cblob_epollrdhup(void) { return EPOLLRDHUP; }
uint32_t cblob_epollhup(void) { return EPOLLHUP; }
uint32_t cblob_epollerr(void) { return EPOLLERR; }
uint32_t cblob_epollet(void) { return EPOLLET; }

int cblob_eventfd(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }
