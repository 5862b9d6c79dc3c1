//go:build unix

package main

import (
	"os"
	"runtime"
	"syscall"
)

// peakRSS is the child's maximum resident set size in bytes, from the
// rusage the kernel kept for it: Linux and the BSDs count kilobytes, macOS
// bytes.
func peakRSS(ps *os.ProcessState) int64 {
	if ps == nil {
		return 0
	}
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil {
		return 0
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) * 1024
}
