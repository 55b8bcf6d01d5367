// Loopback TCP request/response (1-byte each way), like netperf -t TCP_RR: a forked server
// echoes; the client counts transactions for SECONDS. Prints transactions/s.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
int main(int argc, char **argv) {
    double secs = argc > 1 ? atof(argv[1]) : 5.0;
    int one = 1, ls = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(ls, (void *)&a, sizeof a) || listen(ls, 1)) { perror("bind"); return 1; }
    socklen_t len = sizeof a; getsockname(ls, (void *)&a, &len);
    pid_t pid = fork();
    if (pid == 0) {
        int c = accept(ls, 0, 0); char b;
        setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        while (read(c, &b, 1) == 1) if (write(c, &b, 1) != 1) break;
        return 0;
    }
    int s = socket(AF_INET, SOCK_STREAM, 0);
    setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(s, (void *)&a, sizeof a)) { perror("connect"); return 1; }
    char b = 'x'; long n = 0; double t0 = now(), t;
    do { if (write(s, &b, 1) != 1 || read(s, &b, 1) != 1) break; n++; } while ((n & 255) || (t = now()) - t0 < secs);
    printf("%.0f transactions/s over %.2f s\n", n / (t - t0), t - t0);
    close(s); wait(0); return 0;
}
