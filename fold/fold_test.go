package fold

import "testing"

func TestString(t *testing.T) {
	for in, want := range map[string]string{
		"":                          "",
		"plain words":               "plain words",
		"Mixed Case":                "mixed case",
		"Ação":                      "acao",
		"PRÓXIMA SEMANA":            "proxima semana",
		"Março, São João":           "marco, sao joao",
		"3º andar, 1ª vez":          "3o andar, 1a vez",
		"crème brûlée naïve":        "creme brulee naive",
		"mañana, ÅSE, ÿ":            "manana, ase, y",
		"日本語 stays":                 "日本語 stays",
		"emoji 🙂 stays":             "emoji 🙂 stays",
		"invalid \xff byte":         "invalid \ufffd byte",
		"orçamento de renovação":    "orcamento de renovacao",
		"e\u0301 (combining acute)": "e (combining acute)",
	} {
		if got := String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestStringKeepsLowerASCIIWithoutAllocating(t *testing.T) {
	s := "already lower case ascii"
	if n := testing.AllocsPerRun(100, func() { _ = String(s) }); n != 0 {
		t.Fatalf("String allocated %v times on lower-case ASCII, want 0", n)
	}
}

func BenchmarkString(b *testing.B) {
	for _, c := range []struct{ name, s string }{
		{"ascii", "quanto custa a renovacao da cozinha no porto"},
		{"accents", "Quanto custa a renovação da cozinha no Pôrto?"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = String(c.s)
			}
		})
	}
}
