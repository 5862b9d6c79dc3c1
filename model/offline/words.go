package offline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// ParseWords reads an app's own vocabulary file, the words its rules read beside its pack
// (an app's pack/words.json), into words, a pointer to the app's struct. The file
// is strict: a field the struct does not have is an error (a misspelt list would otherwise be
// silently empty), and so is every list, map or string field left out or empty, unless its json
// tag says omitempty. Errors name the file's field.
//
//	var w struct {
//		Greetings []string `json:"greetings"`
//		Aliases   map[string]string `json:"aliases,omitempty"`
//	}
//	err := offline.ParseWords(data, &w)
func ParseWords[T any](data []byte, words *T) error {
	v := reflect.ValueOf(words).Elem()
	if v.Kind() != reflect.Struct {
		return fmt.Errorf("offline: ParseWords needs a pointer to a struct, got %T", words)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(words); err != nil {
		return fmt.Errorf("%w; the fields are %s", err, strings.Join(wordFields(v.Type()), ", "))
	}
	if dec.More() {
		return fmt.Errorf("more than one JSON value: the file holds one object")
	}
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" || strings.Contains(opts, "omitempty") {
			continue
		}
		if name == "" {
			name = f.Name
		}
		switch fv := v.Field(i); fv.Kind() {
		case reflect.Slice, reflect.Map, reflect.String:
			if fv.Len() == 0 {
				return fmt.Errorf("%q is missing or empty: give at least one entry", name)
			}
		}
	}
	return nil
}

// wordFields are the JSON names of a vocabulary struct's fields.
func wordFields(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		if f := t.Field(i); f.IsExported() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" {
				name = f.Name
			}
			if name != "-" {
				out = append(out, fmt.Sprintf("%q", name))
			}
		}
	}
	return out
}
