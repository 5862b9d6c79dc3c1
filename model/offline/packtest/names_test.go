package packtest_test

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"testing"

	"github.com/trellis-go/trellis/model/offline/packtest"
)

func TestNamesInCode(t *testing.T) {
	dir := t.TempDir()
	for name, src := range map[string]string{
		"a.go":      "package x\nvar _ = say(\"hello\") + say(\"bye\")\n",
		"b.go":      "package x\nvar _ = say(\"hello\") + say(\"hello\")\n",
		"a_test.go": "package x\nvar _ = say(\"only_in_tests\")\n",
		"notes.txt": "say(\"not_go\")\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := packtest.NamesInCode(t, dir, regexp.MustCompile(`say\("([a-z_]+)"\)`))
	want := map[string][]string{"hello": {"a.go", "b.go"}, "bye": {"a.go"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
