package checkpoint

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"sync"
	"time"
)

var idClock struct {
	sync.Mutex
	last int64
}

// NewID returns a checkpoint ID: 16 hex digits of a strictly increasing nanosecond clock, a dash,
// and 8 random hex digits. IDs made later in a process sort after earlier ones, and IDs made in
// different processes do not collide.
func NewID() string {
	idClock.Lock()
	now := time.Now().UnixNano()
	if now <= idClock.last {
		now = idClock.last + 1
	}
	idClock.last = now
	idClock.Unlock()

	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], uint64(now))
	var r [4]byte
	_, _ = rand.Read(r[:])
	out := make([]byte, 0, 25)
	out = hex.AppendEncode(out, buf[:])
	out = append(out, '-')
	out = hex.AppendEncode(out, r[:])
	return string(out)
}

// NextVersion returns the version that follows prev ("" for a channel with no value yet).
// Versions carry a random suffix so that two branches forked from one checkpoint never give
// different values the same version.
func NextVersion(prev string) string {
	var n uint64
	if len(prev) >= 12 {
		for _, c := range prev[:12] {
			n = n*10 + uint64(c-'0')
		}
	}
	n++
	var r [4]byte
	_, _ = rand.Read(r[:])
	out := make([]byte, 12, 21)
	for i := 11; i >= 0; i-- {
		out[i] = byte('0' + n%10)
		n /= 10
	}
	out = append(out, '.')
	out = hex.AppendEncode(out, r[:])
	return string(out)
}
