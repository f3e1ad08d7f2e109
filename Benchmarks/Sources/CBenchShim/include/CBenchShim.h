#ifndef CBENCHSHIM_H
#define CBENCHSHIM_H

// What Swift's Glibc module does not export and blob-bench needs: epoll (the load generator and the
// floor server; Swift imports the kernel's packed `struct epoll_event` with its packed layout) and
// syncfs (the durable-put ceiling).
#include <sys/epoll.h>

/// syncfs(2): flushes the file system holding `fd`.
int cbench_syncfs(int fd);

#endif
