//go:build chaos

package chaos

import "syscall"

// dieWithParent makes a replica die with the test binary (a timeout or an
// interrupt would otherwise leave it running against a removed cluster).
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
