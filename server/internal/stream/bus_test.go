package stream

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
)

// TestBusHandlersSetWhileListening: a bus's listener may dispatch another replica's cancel and
// done messages while the server is still setting the bus's handlers (on a shared Redis, other
// servers publish all the time). The race detector reported this once in
// TestRoomsAcrossReplicasRedis; dispatching while setting must be free of races, and once set the
// handlers get the messages.
func TestBusHandlersSetWhileListening(t *testing.T) {
	b := newBus("redis", nil)
	done, _ := json.Marshal(Message{Kind: "done", Thread: "t1", RunID: "r1"})
	cancel, _ := json.Marshal(Message{Kind: "cancel", RunID: "r2", Action: "interrupt"})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 200 {
			b.dispatch(string(done))
			b.dispatch(string(cancel))
		}
	}()
	var mu sync.Mutex
	got := map[string]string{}
	b.Handle(Handlers{Cancel: func(runID, action string) {
		mu.Lock()
		got[runID] = action
		mu.Unlock()
	}, Done: func(threadID, runID string) {
		mu.Lock()
		got[runID] = threadID
		mu.Unlock()
	}})
	wg.Wait()
	b.dispatch(string(done))
	b.dispatch(string(cancel))
	mu.Lock()
	defer mu.Unlock()
	if got["r1"] != "t1" || got["r2"] != "interrupt" {
		t.Fatalf("handlers got %v, want r1→t1 and r2→interrupt", got)
	}
}

// TestEventPayloads: events are split into messages under the bus's limit, in order, and an
// event too large for one goes without its data.
func TestEventPayloads(t *testing.T) {
	b := newBus("postgres", nil)
	b.limit = 300
	big := json.RawMessage(`"` + strings.Repeat("x", 400) + `"`)
	batches := []Batch{
		{RunID: "r1", Events: []Event{{Seq: 1, Event: "messages", Data: json.RawMessage(`[1]`)}, {Seq: 2, Event: "values", Data: big}}},
		{RunID: "r2", Events: []Event{{Seq: 1, Event: "messages", Data: json.RawMessage(`{"a":"b"}`)}}},
	}
	for i := range 10 {
		batches[1].Events = append(batches[1].Events, Event{Seq: int64(i + 2), Event: "messages", Data: json.RawMessage(`"tok"`)})
	}
	payloads := b.EventPayloads(batches)
	if len(payloads) < 2 {
		t.Fatalf("%d payloads, want the events split under the limit", len(payloads))
	}
	var got []MessageEvent
	for _, p := range payloads {
		if len(p) > b.limit {
			t.Fatalf("a payload of %d bytes, over the limit of %d", len(p), b.limit)
		}
		var m Message
		if err := json.Unmarshal([]byte(p), &m); err != nil || m.Kind != "evs" {
			t.Fatalf("payload %q: %v (kind %q)", p, err, m.Kind)
		}
		got = append(got, m.Events...)
	}
	if len(got) != 13 {
		t.Fatalf("%d events in the payloads, want 13", len(got))
	}
	if got[0].RunID != "r1" || string(got[0].Data) != "[1]" || got[1].Seq != 2 || got[1].Data != nil {
		t.Fatalf("first events %+v %+v: want r1's token with its data, then its large event without", got[0], got[1])
	}
	for i, ev := range got[2:] {
		if ev.RunID != "r2" || ev.Seq != int64(i+1) || ev.Data == nil {
			t.Fatalf("event %d of r2: %+v", i+1, ev)
		}
	}
}
