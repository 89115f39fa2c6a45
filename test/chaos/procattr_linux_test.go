//go:build chaos

package chaos

import (
	"os"
	"strconv"
	"syscall"
)

// dieWithParent makes a replica die with the test binary (a timeout or an
// interrupt would otherwise leave it running against a removed cluster).
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// closeInheritedOnExec marks every descriptor this process holds beyond
// stdio close-on-exec, those it inherited included (e.g. the lock of
// `flock /tmp/sunstrider-heavy.lock make test-chaos`): a cluster daemon
// started from here (TestAPIServerRestartDuringChurn restarts the API
// server) must not hold them for its lifetime. Go opens its own
// descriptors close-on-exec already.
func closeInheritedOnExec() {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}
