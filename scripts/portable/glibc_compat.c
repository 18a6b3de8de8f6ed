/* Linked into the portable shim only (scripts/build-portable-shim): keeps its glibc floor at 2.28
   (RHEL 8) although it is compiled against bullseye's glibc 2.31. Two functions newer than 2.28
   are referenced, gettid (2.30, interposer/runtime.cpp) and pthread_cond_clockwait (2.30,
   libstdc++'s std::condition_variable waits on steady_clock, used by us and by ZeroMQ); the link
   renames the references (-Wl,--wrap=NAME) to the replacements below, which need only
   old glibc. Called from any thread; never blocks longer than the call it replaces; no allocation.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

__attribute__((visibility("hidden"))) pid_t __wrap_gettid(void) {
  return (pid_t)syscall(SYS_gettid);
}

/* A wait until ABSTIME on CLOCK: the deadline is moved onto the realtime clock that
   pthread_cond_timedwait uses for a default condition variable, as libstdc++ did before glibc had
   clockwait. A realtime clock step during the wait can end it early; every caller (libstdc++'s
   wait_until) checks its own clock after the wait and treats that as a spurious wakeup. */
__attribute__((visibility("hidden"))) int
__wrap_pthread_cond_clockwait(pthread_cond_t* cond, pthread_mutex_t* mutex, clockid_t clock,
                              const struct timespec* abstime) {
  if (clock == CLOCK_REALTIME) return pthread_cond_timedwait(cond, mutex, abstime);
  if (clock != CLOCK_MONOTONIC) return EINVAL;
  struct timespec mono, real;
  clock_gettime(CLOCK_MONOTONIC, &mono);
  clock_gettime(CLOCK_REALTIME, &real);
  long long left =
      (long long)(abstime->tv_sec - mono.tv_sec) * 1000000000LL + (abstime->tv_nsec - mono.tv_nsec);
  if (left < 0) left = 0;
  long long nsec = real.tv_nsec + left % 1000000000LL;
  struct timespec deadline = {real.tv_sec + (time_t)(left / 1000000000LL) +
                                  (time_t)(nsec / 1000000000LL),
                              (long)(nsec % 1000000000LL)};
  return pthread_cond_timedwait(cond, mutex, &deadline);
}
