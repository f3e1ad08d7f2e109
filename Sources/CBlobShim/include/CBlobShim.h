#ifndef CBLOBSHIM_H
#define CBLOBSHIM_H

// Plain wrappers for Linux calls that Swift's Glibc module does not export.
// The header stays free of _GNU_SOURCE (defining it here conflicts with the Glibc
// module); the .c file defines it before its own includes.

#include <stdint.h>
#include <sys/types.h>

/// renameat2(2). Returns 0 or -1 with errno set.
int cblob_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags);

/// RENAME_NOREPLACE: fail with EEXIST instead of replacing the target.
unsigned int cblob_rename_noreplace(void);

/// syncfs(2): commit the whole filesystem that holds fd. Returns 0 or -1 with errno set.
int cblob_syncfs(int fd);

/// getsockopt(SO_PEERCRED) on a connected Unix socket. Returns 0 or -1 with errno set.
int cblob_peer_credentials(int fd, int32_t *pid, uint32_t *uid, uint32_t *gid);

#endif
