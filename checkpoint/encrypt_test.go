package checkpoint_test

import (
	"bytes"
	"testing"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/checkpoint/checkpointtest"
	"github.com/trellis-go/trellis/encrypt"
)

func testKeys(t *testing.T) *encrypt.Keyring {
	t.Helper()
	k, err := encrypt.NewKeyring(encrypt.Key{ID: "k1", Secret: bytes.Repeat([]byte{7}, 32)})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// An encrypted saver behaves as a saver, and reads back what it sealed.
func TestEncryptedMemorySaver(t *testing.T) {
	keys := testKeys(t)
	checkpointtest.Run(t, func(*testing.T) checkpoint.Saver { return checkpoint.Encrypt(checkpoint.NewMemorySaver(), keys) })
	checkpointtest.PlantSecret(t, checkpoint.Encrypt(checkpoint.NewMemorySaver(), keys))
}
