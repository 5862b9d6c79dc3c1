package checkpointtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trellis-go/trellis/checkpoint"
)

// RunFreshAndShared runs [Run] twice, as subtests: "Fresh", with a saver open returns for each
// of its subtests, and "Shared", with one saver open returns for all of them (so the subtests
// run side by side on one database, as threads do).
func RunFreshAndShared(t *testing.T, open func(t *testing.T) checkpoint.Saver) {
	t.Run("Fresh", func(t *testing.T) { Run(t, open) })
	t.Run("Shared", func(t *testing.T) {
		s := open(t)
		Run(t, func(*testing.T) checkpoint.Saver { return s })
	})
}

// Run checks that the savers newSaver returns behave as [checkpoint.Saver] documents. newSaver is
// called once at the start of every subtest; see the package documentation.
func Run(t *testing.T, newSaver func(t *testing.T) checkpoint.Saver) {
	t.Helper()
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, s checkpoint.Saver)
	}{
		{"PutGetNewestAndByID", testPutGetNewestAndByID},
		{"GetNotFound", testGetNotFound},
		{"RoundTripExact", testRoundTripExact},
		{"BlobChains", testBlobChains},
		{"BlobsOfOtherThreadsAndNamespacesDoNotLeak", testBlobIsolation},
		{"MissingBlobIsAnError", testMissingBlob},
		{"PendingWrites", testPendingWrites},
		{"PendingWritesUnknownCheckpoint", testPendingWritesUnknown},
		{"List", testList},
		{"ListMetadataFilter", testListMetadata},
		{"ListHasNoBlobs", testListNoBlobs},
		{"HeadConflictStoresNothing", testHeadConflict},
		{"PutRetriedAfterLostReply", testPutRetry},
		{"PutIDMustSortAfterHead", testPutIDOrder},
		{"PutWithoutID", testPutWithoutID},
		{"PutRejectsBadInput", testPutBadInput},
		{"PutDuplicateBlobLastWins", testPutDuplicateBlob},
		{"PutDoesNotKeepTheCallersBytes", testPutDoesNotKeepBytes},
		{"HeadsArePerNamespace", testHeadsPerNamespace},
		{"Fork", testFork},
		{"DeleteThreads", testDeleteThreads},
		{"SetMetadata", testSetMetadata},
		{"SetMetadataBadInput", testSetMetadataBadInput},
		{"CopyThread", testCopyThread},
		{"Prune", testPrune},
		{"PruneBadKeep", testPruneBadKeep},
		{"ConcurrentPutsOneWinnerPerHead", testConcurrentPuts},
		{"ContextCancelled", testContextCancelled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSaver(t)
			if s == nil {
				t.Fatal("checkpointtest: newSaver returned nil")
			}
			tc.fn(t, s)
		})
	}
}

// threadSeq makes thread IDs unique across subtests that share one saver.
var threadSeq atomic.Int64

// newThread returns a thread ID no other subtest uses. It contains characters that trip up
// hand-built SQL and LIKE patterns on purpose.
func newThread(t *testing.T) string {
	return fmt.Sprintf("thread-%d-%s-'%%_\\", threadSeq.Add(1), strings.ReplaceAll(t.Name(), "/", "."))
}

// writer keeps the head of one thread namespace, the way the runtime does.
type writer struct {
	t      *testing.T
	s      checkpoint.Saver
	thread string
	ns     string
	head   string
	step   int
}

func newWriter(t *testing.T, s checkpoint.Saver, thread, ns string) *writer {
	return &writer{t: t, s: s, thread: thread, ns: ns, step: -1}
}

// put stores a checkpoint with the given channel versions and blobs and makes it the head.
func (w *writer) put(versions map[string]string, blobs ...checkpoint.Blob) checkpoint.Checkpoint {
	w.t.Helper()
	cp := w.checkpoint(versions)
	if err := w.s.Put(context.Background(), checkpoint.PutRequest{
		ThreadID: w.thread, NS: w.ns, Checkpoint: cp, Blobs: blobs, Head: w.head,
	}); err != nil {
		w.t.Fatalf("Put(thread %q ns %q step %d): %v", w.thread, w.ns, cp.Step, err)
	}
	w.head = cp.ID
	w.step++
	return cp
}

// checkpoint builds the checkpoint put would store next, without storing it.
func (w *writer) checkpoint(versions map[string]string) checkpoint.Checkpoint {
	src := checkpoint.SourceLoop
	if w.step == -1 {
		src = checkpoint.SourceInput
	}
	return checkpoint.Checkpoint{
		ID:        checkpoint.NewID(),
		ParentID:  w.head,
		Step:      w.step,
		Source:    src,
		Versions:  versions,
		Metadata:  map[string]any{"step": w.step, "source": string(src)},
		CreatedAt: time.Now(),
	}
}

func (w *writer) ref(id string) checkpoint.Ref {
	return checkpoint.Ref{ThreadID: w.thread, NS: w.ns, CheckpointID: id}
}

func full(ch, v, data string) checkpoint.Blob {
	return checkpoint.Blob{Channel: ch, Version: v, Data: []byte(data)}
}

func delta(ch, v, base, data string) checkpoint.Blob {
	return checkpoint.Blob{Channel: ch, Version: v, Base: base, Data: []byte(data)}
}

func mustGet(t *testing.T, s checkpoint.Saver, ref checkpoint.Ref) *checkpoint.Tuple {
	t.Helper()
	tup, err := s.Get(context.Background(), ref)
	if err != nil {
		t.Fatalf("Get(%+v): %v", ref, err)
	}
	if tup == nil {
		t.Fatalf("Get(%+v) returned a nil tuple and no error", ref)
	}
	return tup
}

func collect(t *testing.T, s checkpoint.Saver, opts checkpoint.ListOptions) []*checkpoint.Tuple {
	t.Helper()
	var out []*checkpoint.Tuple
	for tup, err := range s.List(context.Background(), opts) {
		if err != nil {
			t.Fatalf("List(%+v): %v", opts, err)
		}
		out = append(out, tup)
	}
	return out
}

func ids(tuples []*checkpoint.Tuple) []string {
	out := make([]string, len(tuples))
	for i, tup := range tuples {
		out[i] = tup.Checkpoint.ID
	}
	return out
}

func reversed(s []string) []string {
	out := slices.Clone(s)
	slices.Reverse(out)
	return out
}

func ptr(s string) *string { return &s }

// blobSet renders blobs in a canonical order for comparison.
func blobSet(blobs []checkpoint.Blob) []string {
	out := make([]string, len(blobs))
	for i, b := range blobs {
		out[i] = fmt.Sprintf("%s@%s<-%q:%q", b.Channel, b.Version, b.Base, b.Data)
	}
	slices.Sort(out)
	return out
}

func wantBlobs(t *testing.T, got []checkpoint.Blob, want ...checkpoint.Blob) {
	t.Helper()
	g, w := blobSet(got), blobSet(want)
	if !slices.Equal(g, w) {
		t.Errorf("blobs:\n got  %q\n want %q", g, w)
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("json.Marshal(%v): %v", v, err)
	}
	return string(b)
}

// sameCheckpoint compares every field; metadata as JSON, times as instants, nil and empty
// collections as equal.
func sameCheckpoint(t *testing.T, got, want checkpoint.Checkpoint) {
	t.Helper()
	if got.ID != want.ID || got.ParentID != want.ParentID || got.Step != want.Step || got.Source != want.Source {
		t.Errorf("checkpoint header: got id=%q parent=%q step=%d source=%q, want id=%q parent=%q step=%d source=%q",
			got.ID, got.ParentID, got.Step, got.Source, want.ID, want.ParentID, want.Step, want.Source)
	}
	if !maps.Equal(got.Versions, want.Versions) {
		t.Errorf("Versions: got %v, want %v", got.Versions, want.Versions)
	}
	if len(got.Next) != len(want.Next) {
		t.Errorf("Next: got %d tasks, want %d", len(got.Next), len(want.Next))
	} else {
		for i := range got.Next {
			g, w := got.Next[i], want.Next[i]
			if g.ID != w.ID || g.Node != w.Node || !bytes.Equal(g.Arg, w.Arg) {
				t.Errorf("Next[%d]: got %+v (arg %q), want %+v (arg %q)", i, g, g.Arg, w, w.Arg)
			}
		}
	}
	if len(got.Barriers) != len(want.Barriers) {
		t.Errorf("Barriers: got %v, want %v", got.Barriers, want.Barriers)
	}
	for k, w := range want.Barriers {
		if g, ok := got.Barriers[k]; !ok || !slices.Equal(g, w) {
			t.Errorf("Barriers[%q]: got %v (present %v), want %v", k, g, ok, w)
		}
	}
	gm, wm := "{}", "{}"
	if len(got.Metadata) > 0 {
		gm = jsonOf(t, got.Metadata)
	}
	if len(want.Metadata) > 0 {
		wm = jsonOf(t, want.Metadata)
	}
	if gm != wm {
		t.Errorf("Metadata:\n got  %s\n want %s", gm, wm)
	}
	if !got.CreatedAt.Equal(want.CreatedAt) {
		t.Errorf("CreatedAt: got %v, want %v", got.CreatedAt, want.CreatedAt)
	}
}

func wantErrIs(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: got error %v, want one matching %v", what, err, target)
	}
}

func testPutGetNewestAndByID(t *testing.T, s checkpoint.Saver) {
	w := newWriter(t, s, newThread(t), "")
	cp1 := w.put(map[string]string{"a": "v1"}, full("a", "v1", `1`))
	cp2 := w.put(map[string]string{"a": "v2"}, full("a", "v2", `2`))

	newest := mustGet(t, s, w.ref(""))
	if newest.Checkpoint.ID != cp2.ID {
		t.Fatalf("Get newest: got %q, want %q", newest.Checkpoint.ID, cp2.ID)
	}
	if newest.Ref != w.ref(cp2.ID) {
		t.Errorf("Get newest: Ref is %+v, want %+v (CheckpointID filled in)", newest.Ref, w.ref(cp2.ID))
	}
	sameCheckpoint(t, newest.Checkpoint, cp2)
	wantBlobs(t, newest.Blobs, full("a", "v2", `2`))

	old := mustGet(t, s, w.ref(cp1.ID))
	if old.Ref != w.ref(cp1.ID) {
		t.Errorf("Get by ID: Ref is %+v, want %+v", old.Ref, w.ref(cp1.ID))
	}
	sameCheckpoint(t, old.Checkpoint, cp1)
	wantBlobs(t, old.Blobs, full("a", "v1", `1`))
	if len(old.Pending) != 0 {
		t.Errorf("Get by ID: %d pending writes, want none", len(old.Pending))
	}
}

func testGetNotFound(t *testing.T, s checkpoint.Saver) {
	ctx := context.Background()
	thread := newThread(t)
	w := newWriter(t, s, thread, "")
	w.put(map[string]string{"a": "v1"}, full("a", "v1", `1`))

	for _, tc := range []struct {
		name string
		ref  checkpoint.Ref
	}{
		{"unknown thread", checkpoint.Ref{ThreadID: thread + "-missing"}},
		{"unknown thread with an ID", checkpoint.Ref{ThreadID: thread + "-missing", CheckpointID: w.head}},
		{"unknown checkpoint ID", checkpoint.Ref{ThreadID: thread, CheckpointID: checkpoint.NewID()}},
		{"unknown namespace", checkpoint.Ref{ThreadID: thread, NS: "child:1"}},
		{"ID of another namespace", checkpoint.Ref{ThreadID: thread, NS: "child:1", CheckpointID: w.head}},
	} {
		tup, err := s.Get(ctx, tc.ref)
		wantErrIs(t, "Get "+tc.name, err, checkpoint.ErrNotFound)
		if tup != nil {
			t.Errorf("Get %s: returned a tuple %+v alongside the error", tc.name, tup.Ref)
		}
	}
}

func testRoundTripExact(t *testing.T, s checkpoint.Saver) {
	ctx := context.Background()
	thread := newThread(t) + " ünïcødé \"quoted\""
	ns := "research:7|task:0f3a"
	big := bytes.Repeat([]byte(`{"role":"user","content":"many words here"},`), 6000)
	big = append(append([]byte{'['}, big[:len(big)-1]...), ']')
	blobs := []checkpoint.Blob{
		// Not normalised JSON: whitespace and key order must survive.
		full("messages", "000000000001.aa", "[ {\"z\":1,  \"a\" : [1,2]} ]\n"),
		delta("messages", "000000000002.bb", "000000000001.aa", `[{"id":"m2","content":"\u00e9\u0000x"}]`),
		full("big", "000000000001.cc", string(big)),
		full("empty", "000000000001.dd", `""`),
	}
	cp := checkpoint.Checkpoint{
		ID:       checkpoint.NewID(),
		Step:     -1,
		Source:   checkpoint.SourceUpdate,
		Versions: map[string]string{"messages": "000000000002.bb", "big": "000000000001.cc", "empty": "000000000001.dd"},
		Next: []checkpoint.Task{
			{ID: "task-1", Node: "agent"},
			{ID: "task-2", Node: "tools", Arg: []byte("{\"tool_call\": {\"id\":\"c1\"}}\n")},
			{ID: "task-3", Node: "tools", Arg: []byte{0, 1, 2, 0xff, 0xfe}},
		},
		Barriers: map[string][]string{"join": {"b", "a"}, "empty-join": {}},
		Metadata: map[string]any{
			"source": "update", "step": -1, "writes": map[string]any{"agent": []any{"hi", 1.5, nil, true}},
			"run_id": "run-ü", "nested": map[string]any{"deep": map[string]any{"x": "<&>"}},
		},
		CreatedAt: time.Date(2025, 3, 4, 5, 6, 7, 123456789, time.FixedZone("X", 3600)),
	}
	if err := s.Put(ctx, checkpoint.PutRequest{ThreadID: thread, NS: ns, Checkpoint: cp, Blobs: blobs}); err != nil {
		t.Fatalf("Put: %v", err)
	}
	pending := []checkpoint.PendingWrite{
		{Channel: "messages", Value: []byte("[ {\"id\" :\"m3\"} ]")},
		{Channel: "__error__", Value: []byte{0, 0xff, '"'}},
		{Channel: "empty", Value: nil},
	}
	ref := checkpoint.Ref{ThreadID: thread, NS: ns, CheckpointID: cp.ID}
	if err := s.PutWrites(ctx, checkpoint.WritesRequest{Ref: ref, TaskID: "task-1", Writes: pending}); err != nil {
		t.Fatalf("PutWrites: %v", err)
	}

	for _, r := range []checkpoint.Ref{ref, {ThreadID: thread, NS: ns}} {
		got := mustGet(t, s, r)
		if got.Ref != ref {
			t.Errorf("Ref: got %+v, want %+v", got.Ref, ref)
		}
		sameCheckpoint(t, got.Checkpoint, cp)
		wantBlobs(t, got.Blobs, blobs...)
		if len(got.Pending) != len(pending) {
			t.Fatalf("Pending: got %d writes, want %d", len(got.Pending), len(pending))
		}
		for i, p := range got.Pending {
			if p.TaskID != "task-1" || p.Channel != pending[i].Channel || !bytes.Equal(p.Value, pending[i].Value) {
				t.Errorf("Pending[%d]: got %+v (value %q), want task-1 %s %q", i, p, p.Value, pending[i].Channel, pending[i].Value)
			}
		}
	}
	listed := collect(t, s, checkpoint.ListOptions{ThreadID: thread, NS: ptr(ns)})
	if len(listed) != 1 {
		t.Fatalf("List: got %d checkpoints, want 1", len(listed))
	}
	if listed[0].Ref != ref {
		t.Errorf("List Ref: got %+v, want %+v", listed[0].Ref, ref)
	}
	sameCheckpoint(t, listed[0].Checkpoint, cp)
}

func testBlobChains(t *testing.T, s checkpoint.Saver) {
	w := newWriter(t, s, newThread(t), "")
	m1 := full("messages", "000000000001.a1", `["hello"]`)
	m2 := delta("messages", "000000000002.a2", m1.Version, `["how are you"]`)
	m3 := delta("messages", "000000000003.a3", m2.Version, `["fine"]`)
	c1 := full("count", "000000000001.b1", `1`)
	c2 := full("count", "000000000002.b2", `2`)

	cp1 := w.put(map[string]string{"messages": m1.Version, "count": c1.Version}, m1, c1)
	cp2 := w.put(map[string]string{"messages": m2.Version, "count": c1.Version}, m2)
	cp3 := w.put(map[string]string{"messages": m3.Version, "count": c2.Version}, m3, c2)

	wantBlobs(t, mustGet(t, s, w.ref("")).Blobs, m1, m2, m3, c2)
	wantBlobs(t, mustGet(t, s, w.ref(cp3.ID)).Blobs, m1, m2, m3, c2)
	wantBlobs(t, mustGet(t, s, w.ref(cp2.ID)).Blobs, m1, m2, c1)
	wantBlobs(t, mustGet(t, s, w.ref(cp1.ID)).Blobs, m1, c1)

	// A full blob in the middle of a channel's history ends the chain there.
	m4 := full("messages", "000000000004.a4", `["compacted"]`)
	m5 := delta("messages", "000000000005.a5", m4.Version, `["after"]`)
	w.put(map[string]string{"messages": m4.Version}, m4)
	w.put(map[string]string{"messages": m5.Version}, m5)
	wantBlobs(t, mustGet(t, s, w.ref("")).Blobs, m4, m5)

	// A checkpoint with no channels has no blobs.
	w.put(map[string]string{})
	if got := mustGet(t, s, w.ref("")); len(got.Blobs) != 0 {
		t.Errorf("checkpoint without channels: got blobs %q", blobSet(got.Blobs))
	}
}

func testBlobIsolation(t *testing.T, s checkpoint.Saver) {
	threadA, threadB := newThread(t), newThread(t)
	versions := map[string]string{"messages": "000000000002.x", "count": "000000000001.y"}
	put := func(thread, ns, tag string) {
		w := newWriter(t, s, thread, ns)
		w.put(versions,
			full("messages", "000000000001.x", `["`+tag+`-1"]`),
			delta("messages", "000000000002.x", "000000000001.x", `["`+tag+`-2"]`),
			full("count", "000000000001.y", `"`+tag+`"`),
			// A blob no checkpoint references must not show up either.
			full("unused", "000000000001.z", `"`+tag+`"`),
		)
	}
	put(threadA, "", "A")
	put(threadA, "sub:1", "A-sub")
	put(threadB, "", "B")

	for _, tc := range []struct{ thread, ns, tag string }{{threadA, "", "A"}, {threadA, "sub:1", "A-sub"}, {threadB, "", "B"}} {
		got := mustGet(t, s, checkpoint.Ref{ThreadID: tc.thread, NS: tc.ns})
		wantBlobs(t, got.Blobs,
			full("messages", "000000000001.x", `["`+tc.tag+`-1"]`),
			delta("messages", "000000000002.x", "000000000001.x", `["`+tc.tag+`-2"]`),
			full("count", "000000000001.y", `"`+tc.tag+`"`),
		)
	}
}

// testPutDoesNotKeepBytes: the runtime reuses the buffers it encodes blobs into, so what a saver
// returns must not change when the caller writes over the bytes it passed to Put.
func testPutDoesNotKeepBytes(t *testing.T, s checkpoint.Saver) {
	w := newWriter(t, s, newThread(t), "")
	small := []byte(`"small"`)
	large := []byte(`"` + strings.Repeat("a conversation that compresses well; ", 1200) + `"`)
	random := make([]byte, 20<<10) // does not compress
	x := uint64(88172645463325252)
	for i := range random {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		random[i] = 'a' + byte(x%26)
	}
	random[0], random[len(random)-1] = '"', '"'
	blobs := []checkpoint.Blob{
		full("small", "000000000001.a", string(small)),
		full("large", "000000000001.b", string(large)),
		full("random", "000000000001.c", string(random)),
	}
	want := make([]checkpoint.Blob, len(blobs))
	for i, b := range blobs {
		want[i] = b
		want[i].Data = bytes.Clone(b.Data)
	}
	w.put(map[string]string{"small": "000000000001.a", "large": "000000000001.b", "random": "000000000001.c"}, blobs...)
	for _, b := range blobs {
		for i := range b.Data {
			b.Data[i] = 'X'
		}
	}
	got := mustGet(t, s, w.ref("")).Blobs
	if len(got) != len(want) {
		t.Fatalf("got %d blobs, want %d", len(got), len(want))
	}
	for _, w := range want {
		i := slices.IndexFunc(got, func(b checkpoint.Blob) bool { return b.Channel == w.Channel })
		if i < 0 {
			t.Errorf("blob %s@%s is missing", w.Channel, w.Version)
			continue
		}
		if g := got[i].Data; !bytes.Equal(g, w.Data) {
			n := 0
			for n < min(len(g), len(w.Data)) && g[n] == w.Data[n] {
				n++
			}
			t.Errorf("blob %s (%d bytes) changed when the caller wrote over the bytes it passed to Put: it differs from byte %d (got %d bytes); Put must copy what it keeps",
				w.Channel, len(w.Data), n, len(g))
		}
	}
}

func testMissingBlob(t *testing.T, s checkpoint.Saver) {
	ctx := context.Background()
	w := newWriter(t, s, newThread(t), "")
	w.put(map[string]string{"a": "000000000001.a"}, full("a", "000000000001.a", `1`))
	// The delta's base was never stored.
	w.put(map[string]string{"a": "000000000003.a"}, delta("a", "000000000003.a", "000000000002.a", `[2]`))
	if tup, err := s.Get(ctx, w.ref("")); err == nil {
		t.Errorf("Get of a checkpoint whose blob chain is broken: got %q and no error", blobSet(tup.Blobs))
	}
	// No blob at all for a version.
	w.put(map[string]string{"b": "000000000001.b"})
	if tup, err := s.Get(ctx, w.ref("")); err == nil {
		t.Errorf("Get of a checkpoint whose blob is missing: got %q and no error", blobSet(tup.Blobs))
	}
}

func testPendingWrites(t *testing.T, s checkpoint.Saver) {
	ctx := context.Background()
	w := newWriter(t, s, newThread(t), "")
	cp1 := w.put(map[string]string{})
	cp2 := w.put(map[string]string{})
	putWrites := func(cpID, task string, writes ...checkpoint.PendingWrite) {
		t.Helper()
		if err := s.PutWrites(ctx, checkpoint.WritesRequest{Ref: w.ref(cpID), TaskID: task, Writes: writes}); err != nil {
			t.Fatalf("PutWrites(%s, %s): %v", cpID, task, err)
		}
	}
	pw := func(ch, v string) checkpoint.PendingWrite {
		return checkpoint.PendingWrite{Channel: ch, Value: []byte(v)}
	}
	check := func(what, cpID string, want ...string) {
		t.Helper()
		got := mustGet(t, s, w.ref(cpID)).Pending
		var g []string
		for _, p := range got {
			g = append(g, p.TaskID+":"+p.Channel+"="+string(p.Value))
		}
		if !slices.Equal(g, want) {
			t.Errorf("%s: pending writes\n got  %q\n want %q", what, g, want)
		}
	}

	// Writes keep the order they were put in, across tasks; the request's TaskID wins over the
	// one in each write.
	putWrites(cp2.ID, "task-b", pw("x", `1`), pw("y", `2`), checkpoint.PendingWrite{TaskID: "ignored", Channel: "z", Value: []byte(`3`)})
	putWrites(cp2.ID, "task-a", pw("x", `4`))
	check("after two tasks", cp2.ID, "task-b:x=1", "task-b:y=2", "task-b:z=3", "task-a:x=4")

	// Repeating a task's PutWrites replaces its writes; they are now the newest put.
	putWrites(cp2.ID, "task-b", pw("y", `5`))
	check("after task-b again", cp2.ID, "task-a:x=4", "task-b:y=5")

	// An empty repeat clears the task's writes.
	putWrites(cp2.ID, "task-a")
	check("after task-a cleared", cp2.ID, "task-b:y=5")

	// Writes belong to one checkpoint.
	check("older checkpoint", cp1.ID)
	putWrites(cp1.ID, "task-b", pw("old", `0`))
	check("older checkpoint after its own write", cp1.ID, "task-b:old=0")
	check("newest checkpoint unchanged", "", "task-b:y=5")

	// Many writes keep their order.
	var many []checkpoint.PendingWrite
	var want []string
	for i := range 50 {
		many = append(many, pw(fmt.Sprintf("c%02d", 49-i), fmt.Sprint(i)))
		want = append(want, fmt.Sprintf("task-c:c%02d=%d", 49-i, i))
	}
	putWrites(cp2.ID, "task-c", many...)
	check("fifty writes", cp2.ID, append([]string{"task-b:y=5"}, want...)...)
}

func testPendingWritesUnknown(t *testing.T, s checkpoint.Saver) {
	ctx := context.Background()
	w := newWriter(t, s, newThread(t), "")
	cp := w.put(map[string]string{})
	write := []checkpoint.PendingWrite{{Channel: "x", Value: []byte(`1`)}}
	for _, tc := range []struct {
		name string
		ref  checkpoint.Ref
	}{
		{"unknown thread", checkpoint.Ref{ThreadID: w.thread + "-missing", CheckpointID: cp.ID}},
		{"unknown checkpoint", w.ref(checkpoint.NewID())},
		{"checkpoint of another namespace", checkpoint.Ref{ThreadID: w.thread, NS: "sub:1", CheckpointID: cp.ID}},
		{"no checkpoint ID", w.ref("")},
	} {
		err := s.PutWrites(ctx, checkpoint.WritesRequest{Ref: tc.ref, TaskID: "t1", Writes: write})
		wantErrIs(t, "PutWrites to "+tc.name, err, checkpoint.ErrNotFound)
	}
	if got := mustGet(t, s, w.ref(cp.ID)).Pending; len(got) != 0 {
		t.Errorf("failed PutWrites left %d writes on the checkpoint", len(got))
	}
}

func testList(t *testing.T, s checkpoint.Saver) {
	thread := newThread(t)
	root := newWriter(t, s, thread, "")
	sub := newWriter(t, s, thread, "sub:1")
	other := newWriter(t, s, newThread(t), "")
	var rootIDs, subIDs, all []string
	for i := range 4 {
		rootIDs = append(rootIDs, root.put(map[string]string{}).ID)
		all = append(all, root.head)
		if i < 3 {
			subIDs = append(subIDs, sub.put(map[string]string{}).ID)
			all = append(all, sub.head)
		}
		other.put(map[string]string{})
	}

	for _, tc := range []struct {
		name string
		opts checkpoint.ListOptions
		want []string
	}{
		{"root by default", checkpoint.ListOptions{ThreadID: thread}, reversed(rootIDs)},
		{"root by name", checkpoint.ListOptions{ThreadID: thread, NS: ptr("")}, reversed(rootIDs)},
		{"one namespace", checkpoint.ListOptions{ThreadID: thread, NS: ptr("sub:1")}, reversed(subIDs)},
		{"unknown namespace", checkpoint.ListOptions{ThreadID: thread, NS: ptr("nope")}, nil},
		{"all namespaces", checkpoint.ListOptions{ThreadID: thread, AllNS: true}, reversed(all)},
		{"limit", checkpoint.ListOptions{ThreadID: thread, Limit: 2}, reversed(rootIDs)[:2]},
		{"limit above count", checkpoint.ListOptions{ThreadID: thread, Limit: 100}, reversed(rootIDs)},
		{"before", checkpoint.ListOptions{ThreadID: thread, Before: rootIDs[2]}, reversed(rootIDs[:2])},
		{"before the first", checkpoint.ListOptions{ThreadID: thread, Before: rootIDs[0]}, nil},
		{"before and limit", checkpoint.ListOptions{ThreadID: thread, Before: rootIDs[3], Limit: 2}, reversed(rootIDs[1:3])},
		{"all namespaces, before and limit", checkpoint.ListOptions{ThreadID: thread, AllNS: true, Before: all[5], Limit: 3}, reversed(all[2:5])},
		{"unknown thread", checkpoint.ListOptions{ThreadID: thread + "-missing"}, nil},
	} {
		got := collect(t, s, tc.opts)
		if !slices.Equal(ids(got), tc.want) {
			t.Errorf("List %s:\n got  %q\n want %q", tc.name, ids(got), tc.want)
		}
		for _, tup := range got {
			wantNS := ""
			if slices.Contains(subIDs, tup.Checkpoint.ID) {
				wantNS = "sub:1"
			}
			if want := (checkpoint.Ref{ThreadID: thread, NS: wantNS, CheckpointID: tup.Checkpoint.ID}); tup.Ref != want {
				t.Errorf("List %s: Ref %+v, want %+v", tc.name, tup.Ref, want)
			}
		}
	}

	// Stopping the iteration early is allowed.
	n := 0
	for _, err := range s.List(context.Background(), checkpoint.ListOptions{ThreadID: thread, AllNS: true}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if n == 2 {
			break
		}
	}
	if n != 2 {
		t.Errorf("breaking out of List: saw %d checkpoints, want 2", n)
	}
}

func testListMetadata(t *testing.T, s checkpoint.Saver) {
	ctx := context.Background()
	thread := newThread(t)
	var idsByName = map[string]string{}
	head := ""
	for _, c := range []struct {
		name string
		md   map[string]any
	}{
		{"a", map[string]any{"source": "input", "step": -1, "user": "ann"}},
		{"b", map[string]any{"source": "loop", "step": 0, "user": "ann", "tags": []any{"x", "y"}}},
		{"c", map[string]any{"source": "loop", "step": 1, "user": "bob", "writes": map[string]any{"agent": map[string]any{"n": 1}}}},
		{"d", map[string]any{"source": "update", "step": 2}},
		{"e", nil},
	} {
		cp := checkpoint.Checkpoint{ID: checkpoint.NewID(), ParentID: head, Source: checkpoint.SourceLoop, Versions: map[string]string{}, Metadata: c.md, CreatedAt: time.Now()}
		if err := s.Put(ctx, checkpoint.PutRequest{ThreadID: thread, Checkpoint: cp, Head: head}); err != nil {
			t.Fatal(err)
		}
		head = cp.ID
		idsByName[c.name] = cp.ID
	}
	names := func(tuples []*checkpoint.Tuple) []string {
		var out []string
		for _, tup := range tuples {
			for n, id := range idsByName {
				if id == tup.Checkpoint.ID {
					out = append(out, n)
				}
			}
		}
		return out
	}
	for _, tc := range []struct {
		filter map[string]any
		limit  int
		want   []string
	}{
		{map[string]any{}, 0, []string{"e", "d", "c", "b", "a"}},
		{map[string]any{"user": "ann"}, 0, []string{"b", "a"}},
		{map[string]any{"user": "ann"}, 1, []string{"b"}},
		{map[string]any{"source": "loop"}, 0, []string{"c", "b"}},
		{map[string]any{"source": "loop", "user": "bob"}, 0, []string{"c"}},
		{map[string]any{"step": 1}, 0, []string{"c"}},
		{map[string]any{"step": 1.0}, 0, []string{"c"}},
		{map[string]any{"step": "1"}, 0, nil},
		{map[string]any{"tags": []any{"x", "y"}}, 0, []string{"b"}},
		// Equality, not containment.
		{map[string]any{"tags": []any{"x"}}, 0, nil},
		{map[string]any{"writes": map[string]any{"agent": map[string]any{"n": 1}}}, 0, []string{"c"}},
		{map[string]any{"writes": map[string]any{}}, 0, nil},
		{map[string]any{"user": nil}, 0, nil},
		{map[string]any{"missing": "x"}, 0, nil},
	} {
		got := names(collect(t, s, checkpoint.ListOptions{ThreadID: thread, Metadata: tc.filter, Limit: tc.limit}))
		if !slices.Equal(got, tc.want) {
			t.Errorf("List with metadata %s limit %d: got %q, want %q", jsonOf(t, tc.filter), tc.limit, got, tc.want)
		}
	}
}

func testListNoBlobs(t *testing.T, s checkpoint.Saver) {
	w := newWriter(t, s, newThread(t), "")
	cp := w.put(map[string]string{"a": "000000000001.a"}, full("a", "000000000001.a", `1`))
	if err := s.PutWrites(context.Background(), checkpoint.WritesRequest{Ref: w.ref(cp.ID), TaskID: "t", Writes: []checkpoint.PendingWrite{{Channel: "a", Value: []byte(`2`)}}}); err != nil {
		t.Fatal(err)
	}
	got := collect(t, s, checkpoint.ListOptions{ThreadID: w.thread})
	if len(got) != 1 {
		t.Fatalf("List: got %d checkpoints, want 1", len(got))
	}
	if len(got[0].Blobs) != 0 || len(got[0].Pending) != 0 {
		t.Errorf("List returned %d blobs and %d pending writes; it should return neither", len(got[0].Blobs), len(got[0].Pending))
	}
	sameCheckpoint(t, got[0].Checkpoint, cp)
}

func testHeadConflict(t *testing.T, s checkpoint.Saver) {
	ctx := context.Background()
	w := newWriter(t, s, newThread(t), "")
	cp1 := w.put(map[string]string{"a": "000000000001.a"}, full("a", "000000000001.a", `1`))
	cp2 := w.put(map[string]string{"a": "000000000002.a"}, full("a", "000000000002.a", `2`))

	for _, tc := range []struct {
		name string
		head string
	}{
		{"no head on a thread that has one", ""},
		{"stale head", cp1.ID},
		{"unknown head", checkpoint.NewID()},
	} {
		lost := w.checkpoint(map[string]string{"a": "000000000003.lost"})
		lost.ParentID = tc.head
		err := s.Put(ctx, checkpoint.PutRequest{
			ThreadID: w.thread, Checkpoint: lost, Head: tc.head,
			Blobs: []checkpoint.Blob{full("a", "000000000003.lost", `"lost"`)},
		})
		wantErrIs(t, "Put with "+tc.name, err, checkpoint.ErrConflict)
		if got := mustGet(t, s, w.ref("")); got.Checkpoint.ID != cp2.ID {
			t.Errorf("after a conflicting put (%s) the newest checkpoint is %q, want %q", tc.name, got.Checkpoint.ID, cp2.ID)
		}
		_, err = s.Get(ctx, w.ref(lost.ID))
		wantErrIs(t, "Get of a checkpoint whose put conflicted ("+tc.name+")", err, checkpoint.ErrNotFound)
	}
	if got := collect(t, s, checkpoint.ListOptions{ThreadID: w.thread}); !slices.Equal(ids(got), []string{cp2.ID, cp1.ID}) {
		t.Errorf("after conflicts List has %q, want %q", ids(got), []string{cp2.ID, cp1.ID})
	}
	// The conflicting puts stored no blob: a checkpoint that refers to the lost version
	// without bringing the blob must find it missing.
	w.put(map[string]string{"a": "000000000003.lost"})
	if tup, err := s.Get(ctx, w.ref("")); err == nil {
		t.Errorf("a conflicting put stored its blobs: %q", blobSet(tup.Blobs))
	}
}

func testPutRetry(t *testing.T, s checkpoint.Saver) {
	ctx := context.Background()
	w := newWriter(t, s, newThread(t), "")
	cp1 := w.put(map[string]string{})
	req := checkpoint.PutRequest{
		ThreadID: w.thread, Head: cp1.ID,
		Checkpoint: w.checkpoint(map[string]string{"a": "000000000001.a"}),
		Blobs:      []checkpoint.Blob{full("a", "000000000001.a", `1`)},
	}
	for i := range 3 {
		if err := s.Put(ctx, req); err != nil {
			t.Fatalf("Put attempt %d of the same checkpoint: %v", i+1, err)
		}
	}
	got := collect(t, s, checkpoint.ListOptions{ThreadID: w.thread})
	if want := []string{req.Checkpoint.ID, cp1.ID}; !slices.Equal(ids(got), want) {
		t.Errorf("after a repeated put List has %q, want %q (no duplicate)", ids(got), want)
	}
	tup := mustGet(t, s, w.ref(""))
	sameCheckpoint(t, tup.Checkpoint, req.Checkpoint)
	wantBlobs(t, tup.Blobs, req.Blobs...)
}

func testPutIDOrder(t *testing.T, s checkpoint.Saver) {
	ctx := context.Background()
	w := newWriter(t, s, newThread(t), "")
	early := w.checkpoint(map[string]string{}) // made first, so its ID sorts first
	cp1 := w.put(map[string]string{})
	early.ParentID = cp1.ID
	err := s.Put(ctx, checkpoint.PutRequest{ThreadID: w.thread, Checkpoint: early, Head: cp1.ID})
	if err == nil {
		t.Fatalf("Put of checkpoint %q after head %q: no error; an ID must sort after the head's", early.ID, cp1.ID)
	}
	if got := mustGet(t, s, w.ref("")); got.Checkpoint.ID != cp1.ID {
		t.Errorf("after a rejected put the newest checkpoint is %q, want %q", got.Checkpoint.ID, cp1.ID)
	}
}

func testPutWithoutID(t *testing.T, s checkpoint.Saver) {
	ctx := context.Background()
	thread := newThread(t)
	err := s.Put(ctx, checkpoint.PutRequest{ThreadID: thread, Checkpoint: checkpoint.Checkpoint{Versions: map[string]string{}}})
	if err == nil {
		t.Fatal("Put of a checkpoint without an ID: no error")
	}
	if errors.Is(err, checkpoint.ErrConflict) || errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("Put of a checkpoint without an ID: %v; want an error about the missing ID", err)
	}
	_, err = s.Get(ctx, checkpoint.Ref{ThreadID: thread})
	wantErrIs(t, "Get after a rejected put", err, checkpoint.ErrNotFound)
}

func testPutBadInput(t *testing.T, s checkpoint.Saver) {
	ctx := context.Background()
	thread := newThread(t)
	for _, tc := range []struct {
		name string
		req  checkpoint.PutRequest
		want string
	}{
		{"no ID", checkpoint.PutRequest{}, "no ID"},
		{"blob without channel", checkpoint.PutRequest{Blobs: []checkpoint.Blob{{Version: "1"}}}, "no Channel"},
		{"blob without version", checkpoint.PutRequest{Blobs: []checkpoint.Blob{{Channel: "a"}}}, "no Version"},
		{"blob based on itself", checkpoint.PutRequest{Blobs: []checkpoint.Blob{{Channel: "a", Version: "1", Base: "1"}}}, "itself"},
	} {
		tc.req.ThreadID = thread
		if tc.name != "no ID" {
			tc.req.Checkpoint.ID = checkpoint.NewID()
		}
		err := s.Put(ctx, tc.req)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Put with %s: %v; want an error mentioning %q", tc.name, err, tc.want)
		}
		if errors.Is(err, checkpoint.ErrConflict) || errors.Is(err, checkpoint.ErrNotFound) {
			t.Errorf("Put with %s: %v; want an error about the request, not a conflict or a missing checkpoint", tc.name, err)
		}
	}
	_, err := s.Get(ctx, checkpoint.Ref{ThreadID: thread})
	wantErrIs(t, "Get after rejected puts", err, checkpoint.ErrNotFound)
}

func testPutDuplicateBlob(t *testing.T, s checkpoint.Saver) {
	w := newWriter(t, s, newThread(t), "")
	w.put(map[string]string{"a": "1"}, full("a", "1", "first"), full("a", "1", "second"))
	wantBlobs(t, mustGet(w.t, s, w.ref("")).Blobs, full("a", "1", "second"))
}

func testHeadsPerNamespace(t *testing.T, s checkpoint.Saver) {
	thread := newThread(t)
	root := newWriter(t, s, thread, "")
	sub := newWriter(t, s, thread, "sub:1")
	root.put(map[string]string{})
	sub.put(map[string]string{}) // head "" in its own namespace, although the root has one
	root.put(map[string]string{})
	sub.put(map[string]string{})
	if got := mustGet(t, s, root.ref("")).Checkpoint.ID; got != root.head {
		t.Errorf("root newest %q, want %q", got, root.head)
	}
	if got := mustGet(t, s, sub.ref("")).Checkpoint.ID; got != sub.head {
		t.Errorf("sub newest %q, want %q", got, sub.head)
	}
}

func testFork(t *testing.T, s checkpoint.Saver) {
	w := newWriter(t, s, newThread(t), "")
	m1 := full("messages", "000000000001.a", `["hi"]`)
	m2 := delta("messages", "000000000002.a", m1.Version, `["a"]`)
	m3 := delta("messages", "000000000003.a", m2.Version, `["b"]`)
	cp1 := w.put(map[string]string{"messages": m1.Version}, m1)
	cp2 := w.put(map[string]string{"messages": m2.Version}, m2)
	cp3 := w.put(map[string]string{"messages": m3.Version}, m3)

	// Fork from cp1: a new checkpoint whose parent is cp1, with a branch of its own on top of
	// cp1's version. The writer's head is still cp3.
	f := full("messages", "000000000002.fork", `["edited"]`)
	fork := w.checkpoint(map[string]string{"messages": f.Version})
	fork.ParentID = cp1.ID
	fork.Source = checkpoint.SourceFork
	if err := s.Put(context.Background(), checkpoint.PutRequest{ThreadID: w.thread, Checkpoint: fork, Head: cp3.ID, Blobs: []checkpoint.Blob{f}}); err != nil {
		t.Fatalf("Put fork: %v", err)
	}
	w.head = fork.ID
	fd := delta("messages", "000000000003.fork", f.Version, `["more"]`)
	next := w.put(map[string]string{"messages": fd.Version}, fd)

	newest := mustGet(t, s, w.ref(""))
	if newest.Checkpoint.ID != next.ID {
		t.Fatalf("newest after fork: %q, want %q", newest.Checkpoint.ID, next.ID)
	}
	wantBlobs(t, newest.Blobs, f, fd)
	forked := mustGet(t, s, w.ref(fork.ID))
	sameCheckpoint(t, forked.Checkpoint, fork)
	// The old branch is intact.
	wantBlobs(t, mustGet(t, s, w.ref(cp3.ID)).Blobs, m1, m2, m3)
	wantBlobs(t, mustGet(t, s, w.ref(cp2.ID)).Blobs, m1, m2)
	want := []string{next.ID, fork.ID, cp3.ID, cp2.ID, cp1.ID}
	if got := ids(collect(t, s, checkpoint.ListOptions{ThreadID: w.thread})); !slices.Equal(got, want) {
		t.Errorf("List after fork: got %q, want %q", got, want)
	}
}

// testCopyThread copies a thread with two namespaces, delta chains, a fork and pending writes
// through checkpoint.CopyThread and compares every checkpoint of the copy with its original.
func testCopyThread(t *testing.T, s checkpoint.Saver) {
	ctx := context.Background()
	w := newWriter(t, s, newThread(t), "")
	m1 := full("messages", "000000000001.a", `["hi"]`)
	m2 := delta("messages", "000000000002.a", m1.Version, `["a"]`)
	m3 := delta("messages", "000000000003.a", m2.Version, `["b"]`)
	c1 := full("count", "000000000001.c", `1`)
	cp1 := w.put(map[string]string{"messages": m1.Version, "count": c1.Version}, m1, c1)
	w.put(map[string]string{"messages": m2.Version, "count": c1.Version}, m2)
	cp3 := w.put(map[string]string{"messages": m3.Version, "count": c1.Version}, m3)
	f := full("messages", "000000000002.fork", `["edited"]`)
	fork := w.checkpoint(map[string]string{"messages": f.Version})
	fork.ParentID, fork.Source = cp1.ID, checkpoint.SourceFork
	fork.Metadata["thread_id"] = w.thread
	if err := s.Put(ctx, checkpoint.PutRequest{ThreadID: w.thread, Checkpoint: fork, Head: cp3.ID, Blobs: []checkpoint.Blob{f}}); err != nil {
		t.Fatalf("Put fork: %v", err)
	}
	w.head = fork.ID
	last := w.put(map[string]string{"messages": f.Version})
	sub := newWriter(t, s, w.thread, "child:1")
	sub.put(map[string]string{"x": "000000000001.x"}, full("x", "000000000001.x", `"sub"`))
	subLast := sub.put(map[string]string{"x": "000000000001.x"})
	for _, pw := range []struct {
		ref  checkpoint.Ref
		task string
		vals []string
	}{{w.ref(last.ID), "task-b", []string{"1", "2"}}, {w.ref(last.ID), "task-a", []string{"3"}}, {sub.ref(subLast.ID), "task-s", []string{"4"}}} {
		var ws []checkpoint.PendingWrite
		for _, v := range pw.vals {
			ws = append(ws, checkpoint.PendingWrite{Channel: "c", Value: []byte(v)})
		}
		if err := s.PutWrites(ctx, checkpoint.WritesRequest{Ref: pw.ref, TaskID: pw.task, Writes: ws}); err != nil {
			t.Fatalf("PutWrites: %v", err)
		}
	}

	to := newThread(t)
	if err := checkpoint.CopyThread(ctx, s, w.thread, to); err != nil {
		t.Fatalf("CopyThread: %v", err)
	}
	pending := func(ps []checkpoint.PendingWrite) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.TaskID+":"+p.Channel+"="+string(p.Value))
		}
		return out
	}
	originals := collect(t, s, checkpoint.ListOptions{ThreadID: w.thread, AllNS: true})
	copies := collect(t, s, checkpoint.ListOptions{ThreadID: to, AllNS: true})
	if !slices.Equal(ids(copies), ids(originals)) || len(originals) != 7 {
		t.Fatalf("the copy lists %q, the original %q (want 7 checkpoints)", ids(copies), ids(originals))
	}
	for _, o := range originals {
		orig := mustGet(t, s, o.Ref)
		ref := o.Ref
		ref.ThreadID = to
		cp := mustGet(t, s, ref)
		want := orig.Checkpoint
		if want.Metadata["thread_id"] != nil {
			want.Metadata = maps.Clone(want.Metadata)
			want.Metadata["thread_id"] = to
		}
		sameCheckpoint(t, cp.Checkpoint, want)
		wantBlobs(t, cp.Blobs, orig.Blobs...)
		if g, w := pending(cp.Pending), pending(orig.Pending); !slices.Equal(g, w) {
			t.Errorf("checkpoint %s: the copy's pending writes are %q, the original's %q", o.Ref.CheckpointID, g, w)
		}
	}
	if got := mustGet(t, s, checkpoint.Ref{ThreadID: to}).Checkpoint.ID; got != last.ID {
		t.Errorf("the copy's newest checkpoint is %q, want %q", got, last.ID)
	}

	// The copy is a thread of its own: writing to it leaves the original as it was.
	cw := newWriter(t, s, to, "")
	cw.head, cw.step = last.ID, last.Step+1
	cw.put(map[string]string{"messages": "000000000003.copy"}, delta("messages", "000000000003.copy", f.Version, `["c"]`))
	if got := mustGet(t, s, w.ref("")).Checkpoint.ID; got != last.ID {
		t.Errorf("writing to the copy changed the original's newest checkpoint to %q", got)
	}

	// A target that has checkpoints is refused, and keeps them.
	if err := checkpoint.CopyThread(ctx, s, w.thread, to); err == nil {
		t.Errorf("copying onto a thread with checkpoints succeeded")
	}
	if n := len(collect(t, s, checkpoint.ListOptions{ThreadID: to, AllNS: true})); n != 8 {
		t.Errorf("after the refused copy the target has %d checkpoints, want 8", n)
	}
	// A thread without checkpoints copies as nothing.
	empty := newThread(t)
	if err := checkpoint.CopyThread(ctx, s, newThread(t), empty); err != nil {
		t.Errorf("copying a thread without checkpoints: %v", err)
	}
	if n := len(collect(t, s, checkpoint.ListOptions{ThreadID: empty, AllNS: true})); n != 0 {
		t.Errorf("copying a thread without checkpoints made %d", n)
	}
}

func testDeleteThreads(t *testing.T, s checkpoint.Saver) {
	ctx := context.Background()
	gone, alsoGone, keep := newThread(t), newThread(t), newThread(t)
	root := newWriter(t, s, gone, "")
	sub := newWriter(t, s, gone, "sub:1")
	also := newWriter(t, s, alsoGone, "")
	other := newWriter(t, s, keep, "")
	for range 3 {
		cp := root.put(map[string]string{"a": root.head + ".v"}, full("a", root.head+".v", `1`))
		if err := s.PutWrites(ctx, checkpoint.WritesRequest{Ref: root.ref(cp.ID), TaskID: "t", Writes: []checkpoint.PendingWrite{{Channel: "a", Value: []byte(`1`)}}}); err != nil {
			t.Fatal(err)
		}
		sub.put(map[string]string{"b": sub.head + ".v"}, full("b", sub.head+".v", `2`))
		also.put(map[string]string{"c": also.head + ".v"}, full("c", also.head+".v", `4`))
		other.put(map[string]string{"a": other.head + ".v"}, full("a", other.head+".v", `3`))
	}
	if err := s.PutWrites(ctx, checkpoint.WritesRequest{Ref: other.ref(other.head), TaskID: "t", Writes: []checkpoint.PendingWrite{{Channel: "a", Value: []byte(`5`)}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteThreads(ctx, []string{gone, gone + "-never-existed", alsoGone}); err != nil {
		t.Fatalf("DeleteThreads: %v", err)
	}
	for _, ref := range []checkpoint.Ref{root.ref(""), sub.ref(""), also.ref(""), root.ref(root.head)} {
		_, err := s.Get(ctx, ref)
		wantErrIs(t, fmt.Sprintf("Get %+v after DeleteThreads", ref), err, checkpoint.ErrNotFound)
	}
	for _, th := range []string{gone, alsoGone} {
		if got := collect(t, s, checkpoint.ListOptions{ThreadID: th, AllNS: true}); len(got) != 0 {
			t.Errorf("List after DeleteThreads: %q", ids(got))
		}
	}
	if got := collect(t, s, checkpoint.ListOptions{ThreadID: keep}); len(got) != 3 {
		t.Errorf("DeleteThreads touched another thread: it has %d checkpoints, want 3", len(got))
	}
	if tup := mustGet(t, s, other.ref("")); len(tup.Blobs) != 1 || len(tup.Pending) != 1 {
		t.Errorf("DeleteThreads touched another thread: its newest has %d blobs and %d pending writes, want 1 and 1", len(tup.Blobs), len(tup.Pending))
	}

	// The thread starts afresh: its head is gone too, and so are its blobs.
	fresh := newWriter(t, s, gone, "")
	fresh.put(map[string]string{"a": root.head + ".v"})
	if tup, err := s.Get(ctx, fresh.ref("")); err == nil {
		t.Errorf("DeleteThreads left blobs behind: %q", blobSet(tup.Blobs))
	}

	// A list of one, unknown threads, the same thread twice and no threads are all fine.
	for _, list := range [][]string{{gone}, {gone + "-never-existed"}, {keep + "-x", keep + "-x"}, {}, nil} {
		if err := s.DeleteThreads(ctx, list); err != nil {
			t.Errorf("DeleteThreads(%q): %v", list, err)
		}
	}
	if _, err := s.Get(ctx, fresh.ref("")); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("DeleteThreads of one thread: Get afterwards = %v, want ErrNotFound", err)
	}
	mustGet(t, s, other.ref(""))
}

func testSetMetadata(t *testing.T, s checkpoint.Saver) {
	ctx := context.Background()
	w := newWriter(t, s, newThread(t), "")
	sub := newWriter(t, s, w.thread, "sub:1")
	first := w.put(map[string]string{"a": "1"}, full("a", "1", `1`))
	subCP := sub.put(map[string]string{})
	newest := w.put(map[string]string{"a": "1"})
	if err := s.PutWrites(ctx, checkpoint.WritesRequest{Ref: w.ref(first.ID), TaskID: "t", Writes: []checkpoint.PendingWrite{{Channel: "a", Value: []byte(`2`)}}}); err != nil {
		t.Fatal(err)
	}

	md := map[string]any{"user": "ann", "tags": []any{"x"}, "n": 2.0, "nested": map[string]any{"k": "v"}}
	if err := s.SetMetadata(ctx, w.ref(first.ID), md); err != nil {
		t.Fatalf("SetMetadata: %v", err)
	}
	got := mustGet(t, s, w.ref(first.ID))
	want := first
	want.Metadata = md
	sameCheckpoint(t, got.Checkpoint, want) // only the metadata changed
	wantBlobs(t, got.Blobs, full("a", "1", `1`))
	if len(got.Pending) != 1 {
		t.Errorf("SetMetadata dropped pending writes: %d left, want 1", len(got.Pending))
	}
	// The head did not move, the other checkpoints kept theirs, and List filters on the new value.
	sameCheckpoint(t, mustGet(t, s, w.ref("")).Checkpoint, newest)
	sameCheckpoint(t, mustGet(t, s, sub.ref("")).Checkpoint, subCP)
	if got := ids(collect(t, s, checkpoint.ListOptions{ThreadID: w.thread, Metadata: map[string]any{"user": "ann"}})); !slices.Equal(got, []string{first.ID}) {
		t.Errorf("List by the new metadata: %q, want %q", got, first.ID)
	}
	if got := collect(t, s, checkpoint.ListOptions{ThreadID: w.thread, Metadata: first.Metadata}); len(got) != 0 {
		t.Errorf("List by the replaced metadata found %q", ids(got))
	}
	next := w.put(map[string]string{"a": "1"})
	if mustGet(t, s, w.ref("")).Checkpoint.ID != next.ID {
		t.Error("a put after SetMetadata did not become the head")
	}

	// Nil and empty metadata clear it.
	for _, clear := range []map[string]any{nil, {}} {
		if err := s.SetMetadata(ctx, sub.ref(subCP.ID), clear); err != nil {
			t.Fatalf("SetMetadata(%v): %v", clear, err)
		}
		if got := mustGet(t, s, sub.ref("")).Checkpoint.Metadata; len(got) != 0 {
			t.Errorf("SetMetadata(%v) left %v", clear, got)
		}
		if err := s.SetMetadata(ctx, sub.ref(subCP.ID), md); err != nil {
			t.Fatal(err)
		}
	}
}

func testSetMetadataBadInput(t *testing.T, s checkpoint.Saver) {
	ctx := context.Background()
	w := newWriter(t, s, newThread(t), "")
	cp := w.put(map[string]string{})
	for name, ref := range map[string]checkpoint.Ref{
		"an unknown thread":     {ThreadID: w.thread + "-never-existed", CheckpointID: cp.ID},
		"an unknown namespace":  {ThreadID: w.thread, NS: "nope", CheckpointID: cp.ID},
		"an unknown checkpoint": {ThreadID: w.thread, CheckpointID: checkpoint.NewID()},
	} {
		err := s.SetMetadata(ctx, ref, map[string]any{"x": 1})
		wantErrIs(t, "SetMetadata of "+name, err, checkpoint.ErrNotFound)
	}
	if err := s.SetMetadata(ctx, w.ref(""), map[string]any{"x": 1}); err == nil || errors.Is(err, checkpoint.ErrNotFound) || !strings.Contains(err.Error(), "CheckpointID") {
		t.Errorf("SetMetadata without a CheckpointID: %v; want an error saying it is required", err)
	}
	if err := s.SetMetadata(ctx, w.ref(cp.ID), map[string]any{"f": func() {}}); err == nil || !strings.Contains(err.Error(), "metadata") {
		t.Errorf("SetMetadata with metadata that is not JSON: %v; want an error about the metadata", err)
	}
	// Nothing changed.
	sameCheckpoint(t, mustGet(t, s, w.ref(cp.ID)).Checkpoint, cp)
}

func testPrune(t *testing.T, s checkpoint.Saver) {
	ctx := context.Background()
	thread, other := newThread(t), newThread(t)
	root := newWriter(t, s, thread, "")
	sub := newWriter(t, s, thread, "sub:1")

	// messages: full, then deltas all the way; "old" is only referenced by the first checkpoint.
	var roots []checkpoint.Checkpoint
	var msgs []checkpoint.Blob
	prev := ""
	for i := range 6 {
		v := fmt.Sprintf("%012d.m", i+1)
		b := delta("messages", v, prev, fmt.Sprintf(`["m%d"]`, i))
		if prev == "" {
			b = full("messages", v, `["m0"]`)
		}
		msgs = append(msgs, b)
		versions := map[string]string{"messages": v}
		blobs := []checkpoint.Blob{b}
		if i == 0 {
			versions["old"] = "000000000001.o"
			blobs = append(blobs, full("old", "000000000001.o", `"old"`))
		}
		cp := root.put(versions, blobs...)
		roots = append(roots, cp)
		if err := s.PutWrites(ctx, checkpoint.WritesRequest{Ref: root.ref(cp.ID), TaskID: "t", Writes: []checkpoint.PendingWrite{{Channel: "messages", Value: []byte(fmt.Sprint(i))}}}); err != nil {
			t.Fatal(err)
		}
		prev = v
	}
	var subs []checkpoint.Checkpoint
	for i := range 3 {
		v := fmt.Sprintf("%012d.s", i+1)
		subs = append(subs, sub.put(map[string]string{"x": v}, full("x", v, fmt.Sprint(i))))
	}
	short := newWriter(t, s, thread, "short")
	only := short.put(map[string]string{})
	ow := newWriter(t, s, other, "")
	for range 4 {
		ow.put(map[string]string{})
	}

	if err := s.Prune(ctx, checkpoint.PruneRequest{ThreadID: thread, Keep: 2}); err != nil {
		t.Fatalf("Prune: %v", err)
	}

	for _, tc := range []struct {
		ns   string
		want []string
	}{
		{"", []string{roots[5].ID, roots[4].ID}},
		{"sub:1", []string{subs[2].ID, subs[1].ID}},
		{"short", []string{only.ID}},
	} {
		if got := ids(collect(t, s, checkpoint.ListOptions{ThreadID: thread, NS: ptr(tc.ns)})); !slices.Equal(got, tc.want) {
			t.Errorf("after Prune namespace %q lists %q, want %q", tc.ns, got, tc.want)
		}
	}
	if got := collect(t, s, checkpoint.ListOptions{ThreadID: other}); len(got) != 4 {
		t.Errorf("Prune touched another thread: it has %d checkpoints, want 4", len(got))
	}
	// The kept checkpoints still load their whole chains, which start in pruned checkpoints.
	kept := mustGet(t, s, root.ref(roots[4].ID))
	wantBlobs(t, kept.Blobs, msgs[:5]...)
	newest := mustGet(t, s, root.ref(""))
	wantBlobs(t, newest.Blobs, msgs...)
	if len(newest.Pending) != 1 || string(newest.Pending[0].Value) != "5" {
		t.Errorf("Prune dropped the pending writes of a kept checkpoint: %+v", newest.Pending)
	}
	wantBlobs(t, mustGet(t, s, sub.ref(subs[1].ID)).Blobs, full("x", "000000000002.s", "1"))
	// Dropped checkpoints and their writes are gone.
	for _, cp := range roots[:4] {
		_, err := s.Get(ctx, root.ref(cp.ID))
		wantErrIs(t, "Get of a pruned checkpoint", err, checkpoint.ErrNotFound)
		err = s.PutWrites(ctx, checkpoint.WritesRequest{Ref: root.ref(cp.ID), TaskID: "t"})
		wantErrIs(t, "PutWrites to a pruned checkpoint", err, checkpoint.ErrNotFound)
	}
	// Blobs no kept checkpoint needs are gone: a checkpoint that refers to them without
	// bringing them finds them missing.
	root.put(map[string]string{"old": "000000000001.o"})
	if tup, err := s.Get(ctx, root.ref("")); err == nil {
		t.Errorf("Prune kept blob old@000000000001.o that no remaining checkpoint needed: %q", blobSet(tup.Blobs))
	}
	sub.put(map[string]string{"x": "000000000001.s"})
	if tup, err := s.Get(ctx, sub.ref("")); err == nil {
		t.Errorf("Prune kept blob x@000000000001.s that no remaining checkpoint needed: %q", blobSet(tup.Blobs))
	}
	// The head survived: the writer carried on above without a conflict.
	// Pruning again, and pruning an unknown thread, are fine.
	if err := s.Prune(ctx, checkpoint.PruneRequest{ThreadID: thread, Keep: 10}); err != nil {
		t.Errorf("Prune keeping more than there are: %v", err)
	}
	if err := s.Prune(ctx, checkpoint.PruneRequest{ThreadID: thread + "-missing", Keep: 1}); err != nil {
		t.Errorf("Prune of an unknown thread: %v", err)
	}
}

func testPruneBadKeep(t *testing.T, s checkpoint.Saver) {
	w := newWriter(t, s, newThread(t), "")
	w.put(map[string]string{})
	w.put(map[string]string{})
	for _, keep := range []int{0, -1} {
		if err := s.Prune(context.Background(), checkpoint.PruneRequest{ThreadID: w.thread, Keep: keep}); err == nil {
			t.Errorf("Prune with Keep %d: no error; Keep must be at least 1", keep)
		}
	}
	if got := collect(t, s, checkpoint.ListOptions{ThreadID: w.thread}); len(got) != 2 {
		t.Errorf("a rejected Prune deleted checkpoints: %d left, want 2", len(got))
	}
}

func testConcurrentPuts(t *testing.T, s checkpoint.Saver) {
	const writers, rounds = 8, 4
	ctx := context.Background()
	w := newWriter(t, s, newThread(t), "")
	w.put(map[string]string{})
	want := []string{w.head}
	for round := range rounds {
		type result struct {
			id  string
			err error
		}
		results := make(chan result, writers)
		start := make(chan struct{})
		for g := range writers {
			cp := w.checkpoint(map[string]string{"who": fmt.Sprintf("%d.%d", round, g)})
			go func() {
				<-start
				err := s.Put(ctx, checkpoint.PutRequest{
					ThreadID: w.thread, Checkpoint: cp, Head: w.head,
					Blobs: []checkpoint.Blob{full("who", cp.Versions["who"], fmt.Sprint(g))},
				})
				results <- result{cp.ID, err}
			}()
		}
		close(start)
		var winners []string
		for range writers {
			r := <-results
			switch {
			case r.err == nil:
				winners = append(winners, r.id)
			case errors.Is(r.err, checkpoint.ErrConflict):
			default:
				t.Errorf("round %d: Put failed with %v; a losing writer should get ErrConflict", round, r.err)
			}
		}
		if len(winners) != 1 {
			t.Fatalf("round %d: %d writers won the same head, want exactly 1", round, len(winners))
		}
		newest := mustGet(t, s, w.ref(""))
		if newest.Checkpoint.ID != winners[0] {
			t.Fatalf("round %d: newest is %q, the winner was %q", round, newest.Checkpoint.ID, winners[0])
		}
		if len(newest.Blobs) != 1 {
			t.Errorf("round %d: newest has blobs %q, want only its own", round, blobSet(newest.Blobs))
		}
		w.head = winners[0]
		want = append(want, winners[0])
	}
	if got := ids(collect(t, s, checkpoint.ListOptions{ThreadID: w.thread})); !slices.Equal(got, reversed(want)) {
		t.Errorf("history after concurrent puts: got %q, want %q", got, reversed(want))
	}
}

func testContextCancelled(t *testing.T, s checkpoint.Saver) {
	w := newWriter(t, s, newThread(t), "")
	cp := w.put(map[string]string{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()

	_, err := s.Get(ctx, w.ref(""))
	wantErrIs(t, "Get with a cancelled context", err, context.Canceled)
	var listErr error
	for _, err := range s.List(ctx, checkpoint.ListOptions{ThreadID: w.thread}) {
		if err != nil {
			listErr = err
			break
		}
	}
	wantErrIs(t, "List with a cancelled context", listErr, context.Canceled)
	next := w.checkpoint(map[string]string{})
	err = s.Put(ctx, checkpoint.PutRequest{ThreadID: w.thread, Checkpoint: next, Head: cp.ID})
	wantErrIs(t, "Put with a cancelled context", err, context.Canceled)
	err = s.PutWrites(ctx, checkpoint.WritesRequest{Ref: w.ref(cp.ID), TaskID: "t", Writes: []checkpoint.PendingWrite{{Channel: "x", Value: []byte(`1`)}}})
	wantErrIs(t, "PutWrites with a cancelled context", err, context.Canceled)
	err = s.SetMetadata(ctx, w.ref(cp.ID), map[string]any{"x": 1})
	wantErrIs(t, "SetMetadata with a cancelled context", err, context.Canceled)
	err = s.DeleteThreads(ctx, []string{w.thread})
	wantErrIs(t, "DeleteThreads with a cancelled context", err, context.Canceled)
	err = s.Prune(ctx, checkpoint.PruneRequest{ThreadID: w.thread, Keep: 1})
	wantErrIs(t, "Prune with a cancelled context", err, context.Canceled)

	// Nothing happened.
	tup := mustGet(t, s, w.ref(""))
	sameCheckpoint(t, tup.Checkpoint, cp)
	if tup.Checkpoint.ID != cp.ID || len(tup.Pending) != 0 {
		t.Errorf("after cancelled calls the newest is %q with %d pending writes, want %q with none", tup.Checkpoint.ID, len(tup.Pending), cp.ID)
	}
}
