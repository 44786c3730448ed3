/* PID 1 of the emulated machine that runs the codec's test binaries on a CPU model with
 * AVX-512 and GFNI: mounts /proc, prints the CPU flags that matter, runs each test
 * binary listed in /tests/list (one "NAME ENV=VALUE... ARG..." per line: words with an
 * '=' set the environment, the others are passed to the binary), reports each exit
 * status on the console and powers the machine off. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

static void cpu_flags(void) {
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[8192];
    if (!f) {
        printf("EMU cpuinfo unreadable\n");
        return;
    }
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "flags", 5) == 0) {
            const char *want[] = {"avx2", "avx512f", "avx512bw", "avx512vl", "avx512vbmi", "gfni"};
            printf("EMU cpu:");
            for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
                char pat[32];
                snprintf(pat, sizeof pat, " %s", want[i]);
                char *p = strstr(line, pat);
                int ok = p && (p[strlen(pat)] == ' ' || p[strlen(pat)] == '\n');
                printf(" %s=%s", want[i], ok ? "yes" : "no");
            }
            printf("\n");
            break;
        }
    }
    fclose(f);
}

int main(void) {
    mkdir("/proc", 0555);
    mount("proc", "/proc", "proc", 0, NULL);
    mkdir("/tmp", 01777);
    setvbuf(stdout, NULL, _IONBF, 0);
    printf("EMU start\n");
    cpu_flags();
    FILE *list = fopen("/tests/list", "r");
    char line[1024];
    int failed = 0, ran = 0;
    while (list && fgets(line, sizeof line, list)) {
        line[strcspn(line, "\n")] = 0;
        if (!line[0])
            continue;
        char *save = NULL;
        char *name = strtok_r(line, " ", &save);
        char *envs[16], *args[16];
        int ne = 0, na = 0;
        char *e;
        while ((e = strtok_r(NULL, " ", &save))) {
            if (strchr(e, '=') && ne < 15)
                envs[ne++] = e;
            else if (!strchr(e, '=') && na < 13)
                args[na++] = e;
        }
        envs[ne] = NULL;
        char path[512];
        snprintf(path, sizeof path, "/tests/%s", name);
        printf("EMU run %s", name);
        for (int i = 0; i < ne; i++)
            printf(" %s", envs[i]);
        for (int i = 0; i < na; i++)
            printf(" %s", args[i]);
        printf("\n");
        pid_t pid = fork();
        if (pid == 0) {
            char *argv[16] = {path, "--test-threads=1"};
            for (int i = 0; i < na; i++)
                argv[2 + i] = args[i];
            argv[2 + na] = NULL;
            char *envp[20] = {"PATH=/", "HOME=/tmp", "RUST_BACKTRACE=1"};
            for (int i = 0; i <= ne; i++)
                envp[3 + i] = envs[i];
            execve(path, argv, envp);
            perror("execve");
            _exit(127);
        }
        int st = 0;
        waitpid(pid, &st, 0);
        int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        printf("EMU exit %s rc=%d\n", name, rc);
        ran++;
        if (rc != 0)
            failed++;
    }
    printf("EMU done ran=%d failed=%d\n", ran, failed);
    sync();
    /* Power-off drops console output still queued for the serial port. */
    tcdrain(STDOUT_FILENO);
    sleep(2);
    reboot(RB_POWER_OFF);
    return 0;
}
