//go:build chaos && !linux

package chaos

import "syscall"

// dieWithParent is Linux-only; elsewhere TestMain's cleanup stops the
// replicas.
func dieWithParent() *syscall.SysProcAttr { return nil }

// closeInheritedOnExec is Linux-only (it lists /proc/self/fd).
func closeInheritedOnExec() {}
