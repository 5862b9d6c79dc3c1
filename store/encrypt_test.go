package store_test

import (
	"bytes"
	"testing"

	"github.com/trellis-go/trellis/encrypt"
	"github.com/trellis-go/trellis/store"
	"github.com/trellis-go/trellis/store/memstore"
	"github.com/trellis-go/trellis/store/storetest"
)

func TestEncryptedMemStore(t *testing.T) {
	t.Parallel()
	keys, err := encrypt.NewKeyring(encrypt.Key{ID: "k1", Secret: bytes.Repeat([]byte{3}, 32)})
	if err != nil {
		t.Fatal(err)
	}
	inner, err := memstore.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	storetest.Encrypted(t, store.Encrypt(inner, keys))
}
