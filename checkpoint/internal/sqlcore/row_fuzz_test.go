package sqlcore

import (
	"encoding/json"
	"testing"

	"github.com/trellis-go/trellis/checkpoint"
)

// FuzzDecodeCheckpoint feeds arbitrary bytes to the decoding of a stored checkpoint row. It must
// return a checkpoint or an error, never panic; and what it accepts must survive another round
// through the encoder unchanged.
func FuzzDecodeCheckpoint(f *testing.F) {
	for _, seed := range [][2]string{
		{`{"v":{"messages":"000000000002.ab"},"n":[{"id":"t1","node":"agent","arg":"AAE="}],"b":{"join":["a"]}}`, `{"step":1}`},
		{`{"v":{}}`, ``},
		{`{"v":null,"n":null}`, `null`},
		{`{"v":{"a":""}}`, `{}`},
		{`{"n":[{"node":"x"}]}`, `[1]`},
		{`not json`, `{"a":`},
		{`{"v":{"a":7}}`, `{"a":1e999}`},
	} {
		f.Add([]byte(seed[0]), []byte(seed[1]), int64(3), int64(1700000000123456789))
	}
	f.Fuzz(func(t *testing.T, state, metadata []byte, step, createdAt int64) {
		cp, err := Decode(Row{ID: "cp", Step: step, CreatedAt: &createdAt, State: state, Metadata: metadata})
		if err != nil {
			return
		}
		r, err := Encode(cp)
		if err != nil {
			t.Fatalf("a decoded checkpoint does not encode again: %v", err)
		}
		again, err := Decode(r)
		if err != nil {
			t.Fatalf("an encoded checkpoint does not decode: %v\nstate %s", err, r.State)
		}
		a, _ := json.Marshal(cp)
		b, _ := json.Marshal(again)
		if string(a) != string(b) {
			t.Fatalf("round trip changed the checkpoint:\n%s\n%s", a, b)
		}
	})
}

// FuzzCheckChains feeds arbitrary blob rows (as a database returning damaged or hostile data
// would) to the blob-chain check. It must finish, without a panic, with either every chain
// complete or an error.
func FuzzCheckChains(f *testing.F) {
	f.Add([]byte("a1-a2a1b1-"), []byte("a2b1"))
	f.Add([]byte("a1a2a2a1"), []byte("a1"))
	f.Add([]byte(""), []byte("a1"))
	f.Fuzz(func(t *testing.T, rows, want []byte) {
		// Each 2 bytes of rows is a blob: channel, version; a following '-' means a full blob,
		// otherwise the next byte pair names its base in the same channel.
		var blobs []checkpoint.Blob
		for i := 0; i+1 < len(rows); i += 2 {
			b := checkpoint.Blob{Channel: string(rows[i]), Version: string(rows[i+1])}
			if i+2 < len(rows) && rows[i+2] != '-' {
				b.Base = string(rows[i+2])
			}
			blobs = append(blobs, b)
		}
		versions := map[string]string{}
		for i := 0; i+1 < len(want); i += 2 {
			versions[string(want[i])] = string(want[i+1])
		}
		out, err := CheckChains("t", "cp", versions, blobs)
		if err != nil {
			return
		}
		have := map[[2]string]checkpoint.Blob{}
		for _, b := range out {
			have[[2]string{b.Channel, b.Version}] = b
		}
		for ch, v := range versions {
			for n := 0; v != ""; n++ {
				b, ok := have[[2]string{ch, v}]
				if !ok || n > len(out) {
					t.Fatalf("CheckChains accepted an incomplete or looping chain for %s@%s", ch, v)
				}
				v = b.Base
			}
		}
	})
}
