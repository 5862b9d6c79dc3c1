package rehab

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/trellis-go/trellis/apps/rehab/kb"
)

// argState is the state the paraphrases of testdata/arguments.txt are read against: a profile
// with its sections, the memory, one property in focus with its analysis and taxes, two notes
// and two tasks.
func argState() State {
	k := kb.KB{}
	for _, p := range []string{"user/profile", "user/budget", "user/fiscal", "user/preferences", "user/goals",
		"memoria/decisoes", "memoria/rejeitados", "memoria/questoes", "portfolio/p1/analise", "portfolio/p1/impostos",
		"notas/visita", "notas/condominio"} {
		k[p] = kb.Entry{Summary: p, Text: p}
	}
	k["portfolio/index"] = kb.Entry{Summary: "portfolio", Text: "p1: T2 em Alfama, 250 000 €"}
	return State{Knowledge: k, CurrentFocus: &kb.Focus{PropertyID: "p1"},
		Todos: []kb.Todo{{ID: "a1b2c3d4", Task: "Ligar ao canalizador", Status: "pending"}, {ID: "e5f6a7b8", Task: "Pedir o certificado energetico", Status: "pending"}}}
}

// argMisses are paraphrases whose argument is read otherwise, and why.
var argMisses = map[string]string{}

// TestArgumentParaphrases: the argument rehab decides from the words of each held-out paraphrase
// (which section, entry, note or task) is the one written beside it. The figures are logged
// (go test -run TestArgumentParaphrases -v).
func TestArgumentParaphrases(t *testing.T) {
	f, err := os.Open("testdata/arguments.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	ok, all := map[string]int{}, map[string]int{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		head, text, found := strings.Cut(line, " | ")
		intent, want, found2 := strings.Cut(head, " ")
		arg, value, found3 := strings.Cut(want, "=")
		if !found || !found2 || !found3 {
			t.Fatalf("testdata/arguments.txt:%d: want <intent> <argument>=<value> | <message>", n)
		}
		all[intent]++
		got := argumentOf(understand(argState(), text, intent, now, "t"), arg)
		switch {
		case got == value:
			ok[intent]++
			if _, known := argMisses[text]; known {
				t.Errorf("arguments.txt:%d %q is read right now: take it out of argMisses", n, text)
			}
		case argMisses[text] == got:
		default:
			t.Errorf("arguments.txt:%d %q: %s = %q, want %q", n, text, arg, got, value)
		}
	}
	var lines []string
	total, good := 0, 0
	for intent, n := range all {
		lines = append(lines, fmt.Sprintf("%s: %d/%d", intent, ok[intent], n))
		total += n
		good += ok[intent]
	}
	sort.Strings(lines)
	t.Logf("arguments understood: %d/%d\n%s", good, total, strings.Join(lines, "\n"))
}

// argumentOf is the argument arg of the plan's last call, as text ("" when absent).
func argumentOf(p plan, arg string) string {
	if len(p.steps) == 0 {
		return ""
	}
	step := p.steps[len(p.steps)-1]
	var args map[string]any
	if json.Unmarshal(step[len(step)-1].Arguments, &args) != nil {
		return ""
	}
	if v, ok := args[arg]; ok && v != nil {
		return fmt.Sprint(v)
	}
	return ""
}
