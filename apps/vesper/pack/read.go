package pack

import (
	"fmt"

	"github.com/trellis-go/trellis/model/offline"
)

// Read parses one of vesper's language files (words.json here, the tools' and the formatter's
// texts.json) strictly, with offline.ParseWords (every field given, no unknown one), then runs
// check, when set, for what the file must name. Errors begin with file ("vesper tools:
// texts.json").
func Read[T any](file string, b []byte, check func(*T) error) (*T, error) {
	var t T
	if err := offline.ParseWords(b, &t); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if check != nil {
		if err := check(&t); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	}
	return &t, nil
}

// MustRead is [Read] for a file embedded in the build, where a file that does not read is a bug
// of the build: it panics with Read's error.
func MustRead[T any](file string, b []byte, check func(*T) error) *T {
	t, err := Read(file, b, check)
	if err != nil {
		panic(err)
	}
	return t
}

// Need reports the first of names that m (the file's list called list, e.g. "sentences") lacks or
// leaves empty; from names the Go list of the names the code reads, for the error.
func Need(list string, m map[string]string, names []string, from string) error {
	for _, name := range names {
		if m[name] == "" {
			return fmt.Errorf("%s %q is missing or empty; the code reads every name of %s", list, name, from)
		}
	}
	return nil
}
