// Package bufkeep keeps a few large byte buffers from one use to the next.
//
// A sync.Pool empties at every other garbage collection. A buffer used once per run (the
// encoding of a conversation's checkpoint, the scratch space to compress it into) is used less
// often than that when a run allocates enough to collect once or twice, so the pool hands back
// nothing and every run allocates, zeroes and faults in megabytes again. A [Keeper] holds its
// buffers until it is told to keep others, within a bound on their count and total size.
package bufkeep

import (
	"slices"
	"sync"
)

// Keeper holds up to a number of buffers within a total capacity. The zero value keeps nothing;
// use [New]. Its methods are safe for concurrent use.
type Keeper struct {
	mu       sync.Mutex
	free     []*[]byte // by capacity, smallest first
	total    int       // the capacity of free
	slots    int
	maxBytes int
}

// New returns a keeper of at most slots buffers whose capacities add up to at most maxBytes.
func New(slots, maxBytes int) *Keeper {
	return &Keeper{slots: slots, maxBytes: maxBytes}
}

// Get returns an empty buffer of capacity n or more: the smallest kept one that is large
// enough, or a new one. Hand it back with Put once its bytes are no longer used.
func (k *Keeper) Get(n int) *[]byte {
	k.mu.Lock()
	i, _ := slices.BinarySearchFunc(k.free, n, func(p *[]byte, n int) int { return cap(*p) - n })
	if i < len(k.free) {
		p := k.free[i]
		k.free = slices.Delete(k.free, i, i+1)
		k.total -= cap(*p)
		k.mu.Unlock()
		*p = (*p)[:0]
		return p
	}
	k.mu.Unlock()
	b := make([]byte, 0, n)
	return &b
}

// Put offers p back. It is kept if there is room, or in place of smaller kept buffers when
// dropping them makes room; otherwise it is left to the collector.
func (k *Keeper) Put(p *[]byte) {
	if p == nil || cap(*p) == 0 || cap(*p) > k.maxBytes || k.slots <= 0 {
		return
	}
	c := cap(*p)
	k.mu.Lock()
	defer k.mu.Unlock()
	for len(k.free) > 0 && (len(k.free) >= k.slots || k.total+c > k.maxBytes) {
		if cap(*k.free[0]) >= c {
			return // every kept buffer is at least as large
		}
		k.total -= cap(*k.free[0])
		k.free = k.free[1:]
	}
	i, _ := slices.BinarySearchFunc(k.free, c, func(q *[]byte, c int) int { return cap(*q) - c })
	k.free = slices.Insert(k.free, i, p)
	k.total += c
}
