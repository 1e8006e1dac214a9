// The process side of `gpuplan profile`: starts the command as a child and makes sure it cannot be
// separated from gpuplan. Every catchable signal sent to gpuplan is forwarded to the child (INT,
// QUIT, HUP and TERM also start an orderly stop with a short grace period); SIGPIPE is ignored so
// a closed output never kills gpuplan; gpuplan is a Linux child subreaper (PR_SET_CHILD_SUBREAPER)
// so processes that leave the child's process group or session (`setsid cmd &`, daemons) are
// re-parented to it, and on exit every descendant still running is ended (SIGTERM, then SIGKILL);
// if gpuplan itself is killed outright, the command gets SIGKILL (PR_SET_PDEATHSIG).
// On a terminal where gpuplan is in the foreground, the child shares gpuplan's process group so it
// can read the terminal; elsewhere it gets its own group, and a terminal stdin is replaced by
// /dev/null so the child never stops waiting for terminal input it cannot get.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "util/status.h"

namespace gpuplan {

class Supervisor {
 public:
  // Forks and execs `argv`, the child's stdout, stderr and fd 3 (the marker descriptor) connected
  // to pipes read by the caller. Fails if the command cannot be run (nothing is left running then).
  static Result<std::unique_ptr<Supervisor>> start(const std::vector<std::string>& argv);
  ~Supervisor();  // ends whatever is still running and restores gpuplan's signal dispositions
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  pid_t child() const { return child_; }
  bool own_group() const { return own_group_; }
  int stdout_fd() const { return out_fd_; }  // read ends; the caller closes them (see close_output)
  int stderr_fd() const { return err_fd_; }
  int marker_fd() const { return marker_fd_; }
  int wake_fd() const { return wake_fd_; }  // readable when a signal (or SIGCHLD) arrived
  // Stops reading one of the three pipes: its writer then meets a broken pipe, as it would had
  // gpuplan's own output (the reader it copies to) gone away without gpuplan in between.
  void close_pipe(int fd);

  // Drains the wake pipe, forwards what arrived, reaps exited processes and escalates a stop whose
  // grace period ran out. `now_s` is the caller's clock. Call it every loop iteration.
  void service(double now_s);
  bool child_exited() const { return exited_; }
  bool stopping() const { return stop_deadline_s_ >= 0; }
  // The child's exit status as a shell reports it (128 + signal when killed).
  int exit_code() const;
  // Ends every descendant still running: SIGTERM (with SIGCONT, for stopped ones), then SIGKILL.
  void end_tree();
  // Every process below gpuplan (the child's tree and anything re-parented to gpuplan), living.
  std::vector<pid_t> descendants() const;

 private:
  Supervisor() = default;
  void reap();
  void forward(int sig, bool from_terminal, double now_s);

  pid_t child_ = -1;
  bool own_group_ = true;  // false when the child shares gpuplan's group (foreground terminal)
  int out_fd_ = -1, err_fd_ = -1, marker_fd_ = -1, wake_fd_ = -1, wake_write_ = -1;
  bool exited_ = false, tree_ended_ = false;
  int status_ = 0;
  double stop_deadline_s_ = -1;
  int stops_ = 0;
  bool was_subreaper_ = false;
  std::vector<std::pair<int, struct sigaction>> saved_;
};

}  // namespace gpuplan
