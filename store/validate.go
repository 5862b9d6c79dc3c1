package store

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ValidateNamespace checks a namespace of an item: at least one label, each non-empty, at most
// MaxLabelBytes long, valid UTF-8 with no control characters, and at most MaxNamespaceDepth labels.
func ValidateNamespace(op string, ns []string) error {
	if len(ns) == 0 {
		return inputErr(op, "namespace", "is empty", `give at least one label, e.g. []string{"users", "u1"}`, ErrInvalidNamespace)
	}
	return validateLabels(op, "namespace", ns)
}

// ValidatePrefix checks a namespace prefix or suffix: like ValidateNamespace but may be empty.
func ValidatePrefix(op, field string, ns []string) error {
	return validateLabels(op, field, ns)
}

func validateLabels(op, field string, ns []string) error {
	if len(ns) > MaxNamespaceDepth {
		return inputErr(op, field, fmt.Sprintf("has %d labels, more than %d", len(ns), MaxNamespaceDepth), "use fewer, broader labels", ErrInvalidNamespace)
	}
	for i, l := range ns {
		switch {
		case l == "":
			return inputErr(op, field, fmt.Sprintf("label %d is empty", i), "every label needs at least one character", ErrInvalidNamespace)
		case len(l) > MaxLabelBytes:
			return inputErr(op, field, fmt.Sprintf("label %d is %d bytes, more than %d", i, len(l), MaxLabelBytes), "shorten it, or hash long identifiers", ErrInvalidNamespace)
		case !utf8.ValidString(l):
			return inputErr(op, field, fmt.Sprintf("label %d is not valid UTF-8", i), "labels are text", ErrInvalidNamespace)
		case strings.ContainsFunc(l, isControl):
			return inputErr(op, field, fmt.Sprintf("label %d %q has a control character", i, l), "remove tabs, newlines and other control characters", ErrInvalidNamespace)
		}
	}
	return nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// ValidateKey checks an item key: non-empty, valid UTF-8, at most MaxKeyBytes.
func ValidateKey(op, key string) error {
	switch {
	case key == "":
		return inputErr(op, "key", "is empty", "give every item a key", ErrInvalidKey)
	case len(key) > MaxKeyBytes:
		return inputErr(op, "key", fmt.Sprintf("is %d bytes, more than %d", len(key), MaxKeyBytes), "hash long keys", ErrInvalidKey)
	case !utf8.ValidString(key):
		return inputErr(op, "key", "is not valid UTF-8", "keys are text", ErrInvalidKey)
	}
	return nil
}

// CheckPut validates a put request under c and returns the value's JSON encoding.
func (c Config) CheckPut(req PutRequest) ([]byte, error) {
	if err := ValidateNamespace("put", req.Namespace); err != nil {
		return nil, err
	}
	if err := ValidateKey("put", req.Key); err != nil {
		return nil, err
	}
	if req.TTL < 0 {
		return nil, inputErr("put", "TTL", "is negative", "use 0 for the store's default TTL", ErrInvalidValue)
	}
	if req.Value == nil {
		return nil, inputErr("put", "value", "is nil", "to remove an item call Delete; to store nothing use an empty map", ErrInvalidValue)
	}
	for _, p := range req.Index {
		if _, err := ParsePath(p); err != nil {
			return nil, inputErr("put", "Index", err.Error(), `use paths such as "text", "a.b" or "items[*].name"`, ErrInvalidValue)
		}
	}
	b, err := json.Marshal(req.Value)
	if err != nil {
		return nil, inputErr("put", "value", "cannot be encoded as JSON: "+err.Error(), "store only JSON-compatible values", ErrInvalidValue)
	}
	max := c.MaxValueBytes
	if max == 0 {
		max = DefaultMaxValueBytes
	}
	if len(b) > max {
		return nil, inputErr("put", "value", fmt.Sprintf("is %d bytes of JSON, more than the limit of %d", len(b), max), "store large documents as chunks, or raise Config.MaxValueBytes", ErrValueTooLarge)
	}
	return b, nil
}

// JoinNamespace encodes a namespace as one string whose byte prefixes follow label prefixes:
// labels joined by the unit separator (0x1f), which labels may not contain.
func JoinNamespace(ns []string) string { return strings.Join(ns, namespaceSeparatorStr) }

// SplitNamespace reverses JoinNamespace.
func SplitNamespace(s string) []string { return strings.Split(s, namespaceSeparatorStr) }

// NamespaceSeparator is the byte between labels in JoinNamespace's encoding.
const NamespaceSeparator = namespaceSeparatorStr

// HasPrefix reports whether ns starts with prefix, label by label.
func HasPrefix(ns, prefix []string) bool {
	if len(prefix) > len(ns) {
		return false
	}
	for i, p := range prefix {
		if ns[i] != p {
			return false
		}
	}
	return true
}

// MatchNamespace reports whether ns matches a ListNamespaces prefix and suffix, where "*"
// matches any label.
func MatchNamespace(ns, prefix, suffix []string) bool {
	if len(prefix) > len(ns) || len(suffix) > len(ns) {
		return false
	}
	for i, p := range prefix {
		if p != "*" && ns[i] != p {
			return false
		}
	}
	off := len(ns) - len(suffix)
	for i, s := range suffix {
		if s != "*" && ns[off+i] != s {
			return false
		}
	}
	return true
}
