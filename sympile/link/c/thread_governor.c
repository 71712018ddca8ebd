/* Threads that follow the machine's load (config.openmp_follow_load): before each call, at most every @PERIOD@ s, the time other processes kept the
   cores busy since the last look is taken from /proc/stat (the CPUs this process may run
   on, all but idle and iowait time, less the CPU time of this process and of its ended
   children, the C compiler's runs), and the call's OpenMP loops and BLAS splits run on the
   cores left, at least one: the calling thread's OpenMP thread count (omp_set_num_threads)
   is lowered for the call and set back after. A library unit (fixed: compiled once per
   cache) linked into each module that runs OpenMP code; its state is that module's.
   A parallel region's threads wait at its end for the slowest; one that shares its core
   with another process's busy thread makes every region as slow as that core's share, so
   a step on two threads with one core taken was 2-3x slower than on one thread. */
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static double sympile_governor_next = 0, sympile_governor_last = 0;
static double sympile_governor_last_cpu = 0, sympile_governor_last_busy = -1;
/* The cores left to this process at the last look (0: none yet). */
static int sympile_governor_cores = 0;

static double sympile_governor_seconds(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* CPU seconds used so far by this process and by its children that have ended (the C
   compiler's runs: compiling another function is this process's work, not other load). */
static double sympile_governor_own_seconds(void)
{
    struct rusage children;
    double seconds = sympile_governor_seconds(CLOCK_PROCESS_CPUTIME_ID);
    if (getrusage(RUSAGE_CHILDREN, &children) == 0)
        seconds += (double)children.ru_utime.tv_sec + 1e-6 * (double)children.ru_utime.tv_usec
                   + (double)children.ru_stime.tv_sec + 1e-6 * (double)children.ru_stime.tv_usec;
    return seconds;
}

/* The busy seconds so far of the CPUs in `allowed` (/proc/stat's cpuN lines: user, nice,
   system, irq, softirq, steal), or -1 where that cannot be read. */
static double sympile_governor_busy_seconds(const cpu_set_t *allowed)
{
    FILE *file;
    char line[256];
    unsigned long long busy = 0;
    int found = 0;
    if ((file = fopen("/proc/stat", "r")) == NULL)
        return -1;
    while (fgets(line, sizeof line, file) != NULL && strncmp(line, "cpu", 3) == 0) {
        unsigned long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0,
                           softirq = 0, steal = 0;
        int cpu;
        if (sscanf(line, "cpu%d %llu %llu %llu %llu %llu %llu %llu %llu", &cpu, &user,
                   &nice, &system, &idle, &iowait, &irq, &softirq, &steal) < 5
                || cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, allowed))
            continue;  /* the first line, "cpu ", is the total: skipped too */
        busy += user + nice + system + irq + softirq + steal;
        found = 1;
    }
    fclose(file);
    long ticks = sysconf(_SC_CLK_TCK);
    return found && ticks > 0 ? (double)busy / (double)ticks : -1;
}

/* Looks at the load since the last look (at most every @PERIOD@ s, called with the
   monotonic time `now`): updates sympile_governor_cores and starts the next window. */
static void sympile_governor_look(double now)
{
    /* The CPUs this process may run on (busy is -1, no estimate, where unknown). */
    cpu_set_t allowed;
    double busy = sched_getaffinity(0, sizeof allowed, &allowed) == 0
        ? sympile_governor_busy_seconds(&allowed) : -1;
    double cpu = sympile_governor_own_seconds();
    double elapsed = now - sympile_governor_last;
    /* A look after a long pause measures the pause's load: the latest there is, and a
       better guess than the estimate from before the pause. */
    if (busy >= 0 && sympile_governor_last_busy >= 0 && elapsed > 0) {
        double others = ((busy - sympile_governor_last_busy)
                         - (cpu - sympile_governor_last_cpu)) / elapsed;
        int left = (int)((double)CPU_COUNT(&allowed) - others + 0.25);
        sympile_governor_cores = left < 1 ? 1 : left;
    }
    sympile_governor_last = now;
    sympile_governor_last_busy = busy;
    sympile_governor_last_cpu = cpu;
    sympile_governor_next = now + @PERIOD@;
}

/* At module init: the first window starts when the module is loaded, so that a first call
   made a while later already knows the load (it ran on every thread until the next look,
   @PERIOD@ s later: most of a short benchmark on a busy machine). */
void sympile_governor_start(void)
{
    sympile_governor_look(sympile_governor_seconds(CLOCK_MONOTONIC));
}

/* Before a call: lowers the calling thread's OpenMP thread count to the cores left, and
   returns the count to set back after the call (sympile_restore_threads), or 0. */
int sympile_govern_threads(void)
{
    int budget = omp_get_max_threads();
    if (budget <= 1)
        return 0;
    double now = sympile_governor_seconds(CLOCK_MONOTONIC);
    if (now >= sympile_governor_next)
        sympile_governor_look(now);
    if (sympile_governor_cores == 0 || sympile_governor_cores >= budget)
        return 0;
    omp_set_num_threads(sympile_governor_cores);
    return budget;
}

void sympile_restore_threads(int threads)
{
    if (threads > 0)
        omp_set_num_threads(threads);
}
