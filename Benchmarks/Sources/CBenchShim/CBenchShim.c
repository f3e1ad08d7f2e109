#define _GNU_SOURCE
#include <unistd.h>
#include "CBenchShim.h"

int cbench_syncfs(int fd) { return syncfs(fd); }
