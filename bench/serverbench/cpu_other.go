//go:build !unix

package serverbench

import "time"

// cpuTime returns 0 where there is no getrusage.
func cpuTime() time.Duration { return 0 }
