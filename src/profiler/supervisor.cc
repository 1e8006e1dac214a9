#include "profiler/supervisor.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "profiler/host_sampler.h"

namespace gpuplan {

namespace {

// The handler only writes (signal, came-from-the-terminal) to a pipe; the loop does the rest.
int g_wake_write = -1;

void on_signal(int sig, siginfo_t* info, void*) {
  const int saved = errno;
  const unsigned char msg[2] = {static_cast<unsigned char>(sig), static_cast<unsigned char>(info && info->si_code == SI_KERNEL)};
  if (g_wake_write >= 0) (void)!write(g_wake_write, msg, sizeof msg);
  errno = saved;
}

// Catchable signals whose default would end or disturb gpuplan while the child runs. SIGTSTP,
// SIGTTIN and SIGTTOU keep their defaults (job control stops gpuplan and, with it, the child's group).
std::vector<int> forwarded_signals() {
  std::vector<int> s = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF,
                        SIGXCPU, SIGPWR, SIGWINCH, SIGCONT, SIGURG, SIGSTKFLT};
  for (int r = SIGRTMIN; r <= SIGRTMAX; ++r) s.push_back(r);
  return s;
}

bool is_stop_signal(int sig) { return sig == SIGINT || sig == SIGQUIT || sig == SIGHUP || sig == SIGTERM; }

// How long the child gets to exit after a stop signal before its tree is killed. Ctrl-C must end
// the run within a second; SIGTERM (a batch scheduler's notice) leaves time to save a checkpoint.
double grace_s(int sig) { return sig == SIGTERM ? 5.0 : 0.6; }

char process_state(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", pid);
  FILE* f = std::fopen(path, "r");
  if (!f) return 0;
  char buf[512];
  const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = 0;
  const char* p = std::strrchr(buf, ')');
  return p && p[1] == ' ' ? p[2] : 0;
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

Result<std::unique_ptr<Supervisor>> Supervisor::start(const std::vector<std::string>& argv) {
  if (argv.empty()) return make_error("command", "nothing to run");
  std::unique_ptr<Supervisor> s(new Supervisor());
  int out[2], err[2], marker[2], wake[2], exec_pipe[2];
  if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC) || pipe2(marker, O_CLOEXEC) || pipe2(wake, O_CLOEXEC | O_NONBLOCK) ||
      pipe2(exec_pipe, O_CLOEXEC))
    return make_error("profile", std::string("cannot create pipes: ") + std::strerror(errno));
  s->out_fd_ = out[0];
  s->err_fd_ = err[0];
  s->marker_fd_ = marker[0];
  s->wake_fd_ = wake[0];
  s->wake_write_ = g_wake_write = wake[1];

  // Signals are caught from before the fork, so none can slip between fork and the loop.
  struct sigaction sa {};
  sa.sa_sigaction = on_signal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  std::vector<int> caught = forwarded_signals();
  caught.push_back(SIGCHLD);
  for (int sig : caught) {
    // A signal ignored when gpuplan started (INT and QUIT for a non-interactive shell's background
    // job, HUP under nohup) stays ignored, for gpuplan and, inherited, for the command.
    struct sigaction old {};
    sigaction(sig, nullptr, &old);
    if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN && sig != SIGCHLD) continue;
    sigaction(sig, &sa, &old);
    s->saved_.emplace_back(sig, old);
  }
  struct sigaction ign {};
  ign.sa_handler = SIG_IGN;
  sigemptyset(&ign.sa_mask);
  for (int sig : {SIGPIPE, SIGXFSZ}) {  // a closed reader or a size limit becomes a write error
    struct sigaction old {};
    sigaction(sig, &ign, &old);
    s->saved_.emplace_back(sig, old);
  }
  int prev = 0;
  prctl(PR_GET_CHILD_SUBREAPER, &prev);
  s->was_subreaper_ = prev != 0;
  prctl(PR_SET_CHILD_SUBREAPER, 1);

  const bool tty_in = isatty(0);
  s->own_group_ = !(tty_in && tcgetpgrp(0) == getpgrp());
  // Arguments and environment are built before the fork: the child may only make
  // async-signal-safe calls (another gpuplan thread could hold the allocator's lock).
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_strings = {"GPUPLAN_MARKER_FD=3"};
  bool python_set = false;
  for (char** e = environ; *e; ++e) {
    if (std::strncmp(*e, "GPUPLAN_MARKER_FD=", 18) == 0) continue;
    python_set = python_set || std::strncmp(*e, "PYTHONUNBUFFERED=", 17) == 0;
    env_strings.emplace_back(*e);
  }
  if (!python_set) env_strings.emplace_back("PYTHONUNBUFFERED=1");  // Python would hold back step lines written to a pipe
  std::vector<char*> env;
  for (auto& e : env_strings) env.push_back(e.data());
  env.push_back(nullptr);

  const pid_t parent = getpid();
  const pid_t child = fork();
  if (child < 0) {
    const int e = errno;
    for (int fd : {out[1], err[1], marker[1], exec_pipe[0], exec_pipe[1]}) close(fd);
    return make_error("profile", std::string("fork failed: ") + std::strerror(e));
  }
  if (child == 0) {
    // Only async-signal-safe calls from here to exec.
    if (s->own_group_) setpgid(0, 0);
    // Should gpuplan itself be killed outright (SIGKILL, no chance to end the tree), the command
    // goes with it.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    for (const auto& [sig, old] : s->saved_) {
      struct sigaction d = old;
      if (!(d.sa_flags & SA_SIGINFO) && (d.sa_handler == SIG_IGN || d.sa_handler == SIG_DFL)) {
        sigaction(sig, &d, nullptr);  // what gpuplan inherited (an ignored SIGPIPE stays ignored)
      } else {
        signal(sig, SIG_DFL);
      }
    }
    if (s->own_group_ && tty_in) {
      // In the background of a terminal a read would stop the child forever (SIGTTIN).
      const int null = open("/dev/null", O_RDONLY);
      if (null >= 0) dup2(null, 0);
    }
    dup2(out[1], 1);
    dup2(err[1], 2);
    dup2(marker[1], 3);  // dup2 clears close-on-exec on the copy
    execvpe(args[0], args.data(), env.data());
    const int e = errno;
    (void)!write(exec_pipe[1], &e, sizeof e);
    _exit(127);
  }
  s->child_ = child;
  if (s->own_group_) setpgid(child, child);  // also here: no race with the first kill(-child)
  for (int fd : {out[1], err[1], marker[1], exec_pipe[1]}) close(fd);
  int exec_errno = 0;
  ssize_t got;
  do got = read(exec_pipe[0], &exec_errno, sizeof exec_errno);
  while (got < 0 && errno == EINTR);
  close(exec_pipe[0]);
  if (got == static_cast<ssize_t>(sizeof exec_errno)) {
    s->end_tree();
    return make_error("command", "cannot run '" + argv[0] + "': " + std::strerror(exec_errno));
  }
  return s;
}

Supervisor::~Supervisor() {
  if (child_ > 0) end_tree();
  if (!was_subreaper_) prctl(PR_SET_CHILD_SUBREAPER, 0);
  for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) sigaction(it->first, &it->second, nullptr);
  g_wake_write = -1;
  for (int* fd : {&out_fd_, &err_fd_, &marker_fd_}) close_fd(*fd);
  // The write end of the wake pipe: closed after the handlers are gone.
  close_fd(wake_fd_);
  close_fd(wake_write_);
}

void Supervisor::close_pipe(int fd) {
  for (int* own : {&out_fd_, &err_fd_, &marker_fd_})
    if (*own == fd) close_fd(*own);
}

void Supervisor::reap() {
  // Re-parented escapees are gpuplan's children now: collect them too, keeping the child's status.
  int st = 0;
  pid_t p;
  while ((p = waitpid(-1, &st, WNOHANG)) > 0)
    if (p == child_) {
      status_ = st;
      exited_ = true;
    }
}

void Supervisor::forward(int sig, bool from_terminal, double now_s) {
  if (sig == SIGCHLD) return;
  if (is_stop_signal(sig)) {
    ++stops_;
    if (stops_ > 1) {  // asked twice: no more waiting
      end_tree();
      return;
    }
    stop_deadline_s_ = now_s + grace_s(sig);
  }
  if (exited_) return;
  // A key pressed on the terminal already signalled the whole foreground group, child included.
  if (from_terminal && !own_group_) return;
  // Stop signals go to the child's whole group, as a terminal would send them; others (SIGUSR1
  // asking for a checkpoint, SIGWINCH) to the command itself.
  if (is_stop_signal(sig) && own_group_) kill(-child_, sig);
  else kill(child_, sig);
}

void Supervisor::service(double now_s) {
  unsigned char msg[2 * 64];
  ssize_t n;
  while ((n = read(wake_fd_, msg, sizeof msg)) > 0)
    for (ssize_t i = 0; i + 1 < n; i += 2) forward(msg[i], msg[i + 1] != 0, now_s);
  reap();
  if (stopping() && !exited_ && now_s > stop_deadline_s_) end_tree();
}

int Supervisor::exit_code() const {
  if (WIFEXITED(status_)) return WEXITSTATUS(status_);
  if (WIFSIGNALED(status_)) return 128 + WTERMSIG(status_);
  return 1;
}

std::vector<pid_t> Supervisor::descendants() const {
  std::vector<pid_t> all = process_tree(getpid()), out;
  for (pid_t p : all) {
    const char state = p == getpid() ? 0 : process_state(p);
    if (state != 0 && state != 'Z') out.push_back(p);  // gone or a zombie: nothing to end
  }
  return out;
}

void Supervisor::end_tree() {
  if (tree_ended_) return;
  using clock = std::chrono::steady_clock;
  // SIGTERM first (with SIGCONT so stopped processes see it), then SIGKILL until nothing is left;
  // repeated because a process may fork while it is being ended.
  for (int round = 0; round < 6; ++round) {
    reap();
    std::vector<pid_t> pids = descendants();
    if (pids.empty() && (exited_ || child_ < 0)) break;
    const int sig = round == 0 ? SIGTERM : SIGKILL;
    if (own_group_ && !exited_) kill(-child_, sig);
    for (pid_t p : pids) {
      kill(p, sig);
      if (sig == SIGTERM) kill(p, SIGCONT);
    }
    if (own_group_ && !exited_ && sig == SIGTERM) kill(-child_, SIGCONT);
    const auto until = clock::now() + std::chrono::milliseconds(round == 0 ? 300 : 1000);
    while (clock::now() < until) {
      reap();
      if (descendants().empty() && exited_) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  reap();
  tree_ended_ = exited_;
}

}  // namespace gpuplan
