// Loopback TCP request/response (1-byte each way), like netperf -t TCP_RR: a forked server
// echoes; the client counts transactions for SECONDS. Prints transactions/s.
// `tcp_rr SECONDS spin`: neither side sleeps (both read with MSG_DONTWAIT in a loop), so each
// runs on its own CPU and a transaction is the TCP send and receive paths only; against the
// blocking run pinned to one CPU (`taskset -c 0 ./tcp_rr 3`: the same work plus two
// sleep/wakeup cycles a transaction) it bounds the cost of a socket's sleep/wakeup cycle.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static int spin;
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
// One byte: a blocking read, or with `spin` a non-blocking one retried until the byte is
// there. 0 at end of stream or on error.
static int rd(int fd, char *b) {
    if (!spin) return read(fd, b, 1) == 1;
    for (;;) {
        ssize_t r = recv(fd, b, 1, MSG_DONTWAIT);
        if (r == 1) return 1;
        if (r == 0 || (r < 0 && errno != EAGAIN)) return 0;
    }
}
int main(int argc, char **argv) {
    double secs = argc > 1 ? atof(argv[1]) : 5.0;
    spin = argc > 2 && strcmp(argv[2], "spin") == 0;
    int one = 1, ls = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(ls, (void *)&a, sizeof a) || listen(ls, 1)) { perror("bind"); return 1; }
    socklen_t len = sizeof a; getsockname(ls, (void *)&a, &len);
    pid_t pid = fork();
    if (pid == 0) {
        int c = accept(ls, 0, 0); char b;
        setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        while (rd(c, &b)) if (write(c, &b, 1) != 1) break;
        return 0;
    }
    int s = socket(AF_INET, SOCK_STREAM, 0);
    setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(s, (void *)&a, sizeof a)) { perror("connect"); return 1; }
    char b = 'x'; long n = 0; double t0 = now(), t = t0;
    do { if (write(s, &b, 1) != 1 || !rd(s, &b)) break; n++; } while ((n & 255) || (t = now()) - t0 < secs);
    printf("%.0f transactions/s over %.2f s\n", n / (t - t0), t - t0);
    close(s); wait(0); return 0;
}
