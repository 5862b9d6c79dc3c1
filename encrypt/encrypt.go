// Package encrypt seals what trellis writes to its databases: AES-GCM with a keyring of named
// keys, the newest sealing and every one opening, so keys can be rotated without rewriting what
// is stored. checkpoint.Encrypt and store.Encrypt use it to keep channel values, pending writes
// and store values unreadable in the database.
//
//	keys, err := encrypt.ParseKeys(os.Getenv("TRELLIS_ENCRYPTION_KEYS")) // "k2:<base64>,k1:<base64>"
//	saver = checkpoint.Encrypt(saver, keys)
//
// A sealed value starts with a marker no JSON document starts with, then the key's ID, the
// nonce and the ciphertext with its tag. Open passes a value without the marker through as it
// is, so a database written before encryption was turned on stays readable.
package encrypt

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// marker starts every sealed value.
var marker = []byte("\x00trellis-sealed-1\x00")

// ErrUnknownKey is returned when a sealed value names a key the keyring does not hold.
var ErrUnknownKey = errors.New("encrypt: the value was sealed with a key this keyring does not hold")

// ErrTampered is returned when a sealed value does not open: changed, cut short, or sealed with
// another key of the same ID.
var ErrTampered = errors.New("encrypt: the sealed value does not open (changed, cut short, or another key of the same ID)")

// Key is one named AES key: 16, 24 or 32 bytes (AES-128, -192 or -256).
type Key struct {
	ID     string
	Secret []byte
}

// Keyring seals with its first key and opens with any.
type Keyring struct {
	ids  []string
	aead map[string]cipher.AEAD
}

// NewKeyring returns a keyring of keys, the newest first: it seals with keys[0].
func NewKeyring(keys ...Key) (*Keyring, error) {
	if len(keys) == 0 {
		return nil, errors.New("encrypt: a keyring needs at least one key")
	}
	k := &Keyring{aead: map[string]cipher.AEAD{}}
	for i, key := range keys {
		if key.ID == "" || len(key.ID) > 64 || strings.ContainsAny(key.ID, ",: \t") {
			return nil, fmt.Errorf("encrypt: key %d has ID %q; give each key a short ID without commas, colons or spaces", i+1, key.ID)
		}
		if _, dup := k.aead[key.ID]; dup {
			return nil, fmt.Errorf("encrypt: two keys have the ID %q; give each key its own", key.ID)
		}
		block, err := aes.NewCipher(key.Secret)
		if err != nil {
			return nil, fmt.Errorf("encrypt: key %q is %d bytes; an AES key is 16, 24 or 32 bytes (32 recommended)", key.ID, len(key.Secret))
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("encrypt: key %q: %w", key.ID, err)
		}
		k.ids = append(k.ids, key.ID)
		k.aead[key.ID] = aead
	}
	return k, nil
}

// ParseKeys reads a keyring from a setting: comma-separated id:secret pairs, the newest first,
// each secret in standard or URL-safe base64 (make one with `openssl rand -base64 32`).
func ParseKeys(setting string) (*Keyring, error) {
	var keys []Key
	for i, part := range strings.Split(setting, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		id, secret, ok := strings.Cut(part, ":")
		if !ok {
			return nil, fmt.Errorf("encrypt: key %d is not id:base64-secret (write it like k1:%s)", i+1, strings.Repeat("A", 43)+"=")
		}
		raw, err := decodeSecret(strings.TrimSpace(secret))
		if err != nil {
			return nil, fmt.Errorf("encrypt: the secret of key %q is not base64: %v", strings.TrimSpace(id), err)
		}
		keys = append(keys, Key{ID: strings.TrimSpace(id), Secret: raw})
	}
	return NewKeyring(keys...)
}

func decodeSecret(s string) ([]byte, error) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	_, err := base64.StdEncoding.DecodeString(s)
	return nil, err
}

// KeyIDs lists the keyring's key IDs, the sealing one first.
func (k *Keyring) KeyIDs() []string { return append([]string(nil), k.ids...) }

// Seal encrypts plain with the newest key. Nil stays nil.
func (k *Keyring) Seal(plain []byte) ([]byte, error) {
	if plain == nil {
		return nil, nil
	}
	id := k.ids[0]
	aead := k.aead[id]
	out := make([]byte, 0, len(marker)+1+len(id)+aead.NonceSize()+len(plain)+aead.Overhead())
	out = append(out, marker...)
	out = append(out, byte(len(id)))
	out = append(out, id...)
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("encrypt: no randomness for a nonce: %w", err)
	}
	out = append(out, nonce...)
	// The key's ID is authenticated with the value, so it cannot be swapped.
	return aead.Seal(out, nonce, plain, []byte(id)), nil
}

// Sealed reports whether data is a sealed value.
func Sealed(data []byte) bool { return bytes.HasPrefix(data, marker) }

// Open decrypts a sealed value with the key it names; a value that is not sealed is returned as
// it is (written before encryption was on).
func (k *Keyring) Open(data []byte) ([]byte, error) {
	if !Sealed(data) {
		return data, nil
	}
	rest := data[len(marker):]
	if len(rest) < 1 || len(rest) < 1+int(rest[0]) {
		return nil, ErrTampered
	}
	id := string(rest[1 : 1+int(rest[0])])
	rest = rest[1+int(rest[0]):]
	aead, ok := k.aead[id]
	if !ok {
		return nil, fmt.Errorf("%w (key %q; keys held: %s): add that key to the keyring, after the newest", ErrUnknownKey, id, strings.Join(k.ids, ", "))
	}
	if len(rest) < aead.NonceSize()+aead.Overhead() {
		return nil, ErrTampered
	}
	plain, err := aead.Open(nil, rest[:aead.NonceSize()], rest[aead.NonceSize():], []byte(id))
	if err != nil {
		return nil, ErrTampered
	}
	return plain, nil
}
