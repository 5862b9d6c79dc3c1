package golden

import "testing"

func TestArchiveRoundTrip(t *testing.T) {
	a := Archive{Comment: "a comment\n", Sections: []Section{{"one", "x\ny\n"}, {"two", ""}, {"three", "-- not a header\n"}}}
	b := Parse(a.Format())
	if b.Comment != a.Comment || len(b.Sections) != 3 {
		t.Fatalf("parsed %+v from %q", b, a.Format())
	}
	for i := range a.Sections {
		if a.Sections[i] != b.Sections[i] {
			t.Errorf("section %d: %+v, want %+v", i, b.Sections[i], a.Sections[i])
		}
	}
}

func TestNormaliser(t *testing.T) {
	var n Normaliser
	got := n.Apply(`{"run_id":"1f0c9a3e-4b5d-4c6e-8f70-112233445566","at":"2026-11-26T18:00:00.123Z","call":"call_AbC123xyz","again":"1f0c9a3e-4b5d-4c6e-8f70-112233445566"}`)
	want := `{"run_id":"<id1>","at":"<time>","call":"<id2>","again":"<id1>"}`
	if got != want {
		t.Fatalf("Apply = %s, want %s", got, want)
	}
	if got := n.Apply("0123456789abcdef0123456789abcdef then 1f0c9a3e-4b5d-4c6e-8f70-112233445566"); got != "<id3> then <id1>" {
		t.Fatalf("a later call: %s", got)
	}
}
