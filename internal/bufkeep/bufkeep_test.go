package bufkeep

import (
	"runtime"
	"testing"
)

func TestKeeperKeepsAcrossCollections(t *testing.T) {
	k := New(2, 1<<20)
	p := k.Get(100 << 10)
	if cap(*p) < 100<<10 || len(*p) != 0 {
		t.Fatalf("Get: len %d cap %d", len(*p), cap(*p))
	}
	*p = append(*p, "written"...)
	k.Put(p)
	runtime.GC()
	runtime.GC()
	q := k.Get(50 << 10)
	if q != p || len(*q) != 0 {
		t.Fatal("the kept buffer was not handed back, empty, after two collections")
	}
}

func TestKeeperBounds(t *testing.T) {
	k := New(2, 300)
	buf := func(n int) *[]byte { b := make([]byte, 0, n); return &b }
	a, b, c, huge := buf(100), buf(150), buf(200), buf(301)
	k.Put(huge) // larger than the whole bound
	k.Put(a)
	k.Put(b)
	if len(k.free) != 2 || k.total != 250 {
		t.Fatalf("kept %d buffers, %d bytes; want 2, 250", len(k.free), k.total)
	}
	k.Put(c) // no slot left: it replaces the smallest (a), then the bytes need b gone too
	if len(k.free) != 1 || k.free[0] != c || k.total != 200 {
		t.Fatalf("after a larger one: %d buffers, %d bytes", len(k.free), k.total)
	}
	k.Put(buf(150)) // no room for it beside c, and smaller than c: dropped
	if len(k.free) != 1 || k.total != 200 {
		t.Fatalf("a small one took the place of a large one: %d buffers, %d bytes", len(k.free), k.total)
	}
	if got := k.Get(500); got == c || cap(*got) < 500 {
		t.Fatal("Get handed out a buffer too small")
	}
	if got := k.Get(150); got != c {
		t.Fatal("Get did not hand out the kept buffer that is large enough")
	}
	var zero Keeper
	zero.Put(buf(10))
	if len(zero.free) != 0 || cap(*zero.Get(10)) < 10 {
		t.Fatal("the zero Keeper kept a buffer")
	}
	k.Put(nil)
}
