//go:build !unix

package serverbench

// RaiseFileLimit does nothing where there is no RLIMIT_NOFILE; it returns 0.
func RaiseFileLimit(uint64) (uint64, error) { return 0, nil }
