package encrypt_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/encrypt"
)

func key(id string, b byte) encrypt.Key {
	return encrypt.Key{ID: id, Secret: bytes.Repeat([]byte{b}, 32)}
}

func TestSealOpenAndRotate(t *testing.T) {
	t.Parallel()
	old, err := encrypt.NewKeyring(key("k1", 1))
	if err != nil {
		t.Fatal(err)
	}
	plain := []byte(`{"secret":"the launch code"}`)
	sealed, err := old.Seal(plain)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("launch")) || !encrypt.Sealed(sealed) {
		t.Fatalf("sealed value %q shows the plaintext or lacks the marker", sealed)
	}
	again, _ := old.Seal(plain)
	if bytes.Equal(again, sealed) {
		t.Fatal("two seals of one value are equal: the nonce is not fresh")
	}
	// Rotation: a keyring with a newer key first seals with it and still opens the old values.
	rotated, err := encrypt.NewKeyring(key("k2", 2), key("k1", 1))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := rotated.Open(sealed); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("the rotated keyring opens the old value as %q, %v", got, err)
	}
	fresh, _ := rotated.Seal(plain)
	if _, err := old.Open(fresh); !errors.Is(err, encrypt.ErrUnknownKey) || !strings.Contains(err.Error(), `"k2"`) {
		t.Fatalf("the old keyring opening a k2 value: %v, want ErrUnknownKey naming k2", err)
	}
	// Values written before encryption pass through.
	if got, err := rotated.Open(plain); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("plaintext: %q, %v", got, err)
	}
	// A changed byte, a cut value, a swapped key ID: none opens.
	bad := append([]byte(nil), fresh...)
	bad[len(bad)-1] ^= 1
	for name, v := range map[string][]byte{"flipped": bad, "cut": fresh[:len(fresh)-20], "marker only": fresh[:20]} {
		if _, err := rotated.Open(v); !errors.Is(err, encrypt.ErrTampered) {
			t.Errorf("%s: %v, want ErrTampered", name, err)
		}
	}
	impostor, _ := encrypt.NewKeyring(key("k2", 9))
	if _, err := impostor.Open(fresh); !errors.Is(err, encrypt.ErrTampered) {
		t.Errorf("another key with the same ID opened the value: %v", err)
	}
}

func TestParseKeys(t *testing.T) {
	t.Parallel()
	k, err := encrypt.ParseKeys(" k2:AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI=, k1:AQEBAQEBAQEBAQEBAQEBAQ== ")
	if err != nil {
		t.Fatal(err)
	}
	if ids := k.KeyIDs(); strings.Join(ids, ",") != "k2,k1" {
		t.Fatalf("key IDs %v", ids)
	}
	for setting, want := range map[string]string{
		"":               "at least one key",
		"k1":             "not id:base64-secret",
		"k1:not base64!": "not base64",
		"k1:AQID":        "16, 24 or 32 bytes",
		"k1:AQEBAQEBAQEBAQEBAQEBAQ==,k1:AQEBAQEBAQEBAQEBAQEBAQ==": "two keys have the ID",
	} {
		if _, err := encrypt.ParseKeys(setting); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error saying %q", setting, err, want)
		}
	}
}
