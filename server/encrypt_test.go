package server

import (
	"bytes"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/encrypt"
)

// With Config.Encryption and EncryptStore, a thread's state and a store item read back through
// the API as they were written, and no row of the SQLite database shows them in plaintext.
func TestEncryptionAtRest(t *testing.T) {
	t.Parallel()
	keys, err := encrypt.NewKeyring(encrypt.Key{ID: "k1", Secret: bytes.Repeat([]byte{5}, 32)})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	b := setup(t, setupOpts{cfg: Config{DataDir: dir, Encryption: keys, EncryptStore: true}})
	const secret = "ATREST-SECRET-93d1"
	var th map[string]any
	if code := b.do("POST", "/threads", map[string]any{}, &th); code != 200 {
		t.Fatalf("create thread: %d", code)
	}
	id := th["thread_id"].(string)
	var out map[string]any
	b.do("POST", "/threads/"+id+"/runs/wait", map[string]any{"assistant_id": "flow", "input": map[string]any{"topic": secret}}, &out)
	var state struct {
		Values map[string]any `json:"values"`
	}
	if code := b.do("GET", "/threads/"+id+"/state", nil, &state); code != 200 || state.Values["topic"] != secret {
		t.Fatalf("state read back: %d %v", code, state.Values)
	}
	if code := b.do("PUT", "/store/items", map[string]any{"namespace": []string{"vault"}, "key": "k", "value": map[string]any{"note": secret}}, nil); code != 204 && code != 200 {
		t.Fatalf("store put: %d", code)
	}
	var item map[string]any
	if code := b.do("GET", "/store/items?namespace=vault&key=k", nil, &item); code != 200 || fmt.Sprint(item["value"]) != "map[note:"+secret+"]" {
		t.Fatalf("store get: %d %v", code, item)
	}
	path, _ := filepath.Glob(filepath.Join(dir, "*.db"))
	if len(path) == 0 {
		t.Fatalf("no database file in %s", dir)
	}
	db, err := sql.Open("sqlite", path[0])
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	checked := 0
	for _, table := range []string{"trellis_checkpoint_blobs", "trellis_checkpoint_writes", "trellis_checkpoints", "store_items"} {
		rows, err := db.Query(`SELECT * FROM "` + table + `"`)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			cells := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range cells {
				ptrs[i] = &cells[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for i, c := range cells {
				text := fmt.Sprint(c)
				if b, ok := c.([]byte); ok {
					text = string(b)
				}
				if strings.Contains(text, secret) {
					t.Errorf("%s.%s shows the secret in plaintext", table, cols[i])
				}
			}
			checked++
		}
		rows.Close()
	}
	if checked == 0 {
		t.Fatal("no row was checked")
	}
}

// EncryptStore without keys is refused at start.
func TestEncryptStoreNeedsKeys(t *testing.T) {
	t.Parallel()
	_, err := New(Config{DataDir: t.TempDir(), EncryptStore: true, Dev: true, Graphs: []GraphSpec{{ID: "flow", Build: buildFlow}}})
	if err == nil || !strings.Contains(err.Error(), "TRELLIS_ENCRYPTION_KEYS") {
		t.Fatalf("err = %v", err)
	}
}
