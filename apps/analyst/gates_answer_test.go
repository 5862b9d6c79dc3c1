package analyst_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/trellis-go/trellis/apps/analyst"
	"github.com/trellis-go/trellis/graph"
)

// badAnswers are resumes no gate takes, each with what the refusal must say.
var badAnswers = []struct {
	name   string
	resume any
	want   string
}{
	{"unknown type", []any{map[string]any{"type": "approve"}}, `type "approve"`},
	{"not a response", map[string]any{"answer": "yes"}, "does not answer"},
	{"response without text", []any{map[string]any{"type": "response", "args": map[string]any{"text": "x"}}}, "args as a string"},
	{"edit without an object", []any{map[string]any{"type": "edit", "args": "make it shorter"}}, "args as an object"},
}

// Each gate refuses, when it is sent, an answer it does not take: a 400 naming the allowed types;
// the gate stays open, the thread is not failed, and the next valid answer of each type is
// applied.
func TestGatesRefuseAnswersTheyDoNotTake(t *testing.T) {
	t.Parallel()
	hs := served(t, analyst.Options{})
	gates := []struct {
		action string
		reach  func(s *session)
		valid  []struct {
			typ  string
			args any
			then string // the gate the run waits at next ("" when it ended)
		}
	}{
		{"Review research plan", func(s *session) {}, []struct {
			typ  string
			args any
			then string
		}{
			{"response", "Add a question on battery swapping costs", "Review research plan"},
			{"edit", map[string]any{"action": "Review research plan", "args": map[string]any{"plan": map[string]any{"sub_questions": []any{map[string]any{"question": "How fast is Voltra growing in Germany?", "sources": []any{"web"}}}}}}, "Review research plan"},
			{"accept", nil, "Review discoveries"},
		}},
		{"Review discoveries", func(s *session) { s.resume("accept", nil) }, []struct {
			typ  string
			args any
			then string
		}{
			{"ignore", nil, "Review discoveries"},
			{"edit", map[string]any{"action": "Review discoveries", "args": map[string]any{"follow_ups": []any{"What does Spinlane charge couriers in Vienna?"}}}, "Review discoveries"},
			{"response", "What do couriers pay per month for a leased e-bike?", "Review discoveries"},
			{"accept", nil, "Review final report"},
		}},
		{"Review final report", func(s *session) { s.resume("accept", nil); s.resume("accept", nil) }, []struct {
			typ  string
			args any
			then string
		}{
			{"response", "What did we find about battery prices?", "Review final report"},
			{"edit", map[string]any{"action": "Review final report", "args": map[string]any{"format": "json"}}, ""},
		}},
	}
	for _, g := range gates {
		t.Run(g.action, func(t *testing.T) {
			t.Parallel()
			s := newSession(t, hs, "")
			s.ask(voltraQuestion, dana)
			g.reach(s)
			s.wantGate(g.action)
			for _, v := range g.valid {
				for _, bad := range badAnswers {
					code, raw := request(t, "", "POST", s.base+"/threads/"+s.thread+"/runs/wait", map[string]any{"assistant_id": "analyst",
						"command": map[string]any{"resume": bad.resume}})
					var e struct{ Detail, Hint string }
					_ = json.Unmarshal(raw, &e)
					if code != 400 || !strings.Contains(e.Detail, bad.want) || !strings.Contains(e.Detail+e.Hint, "accept, edit, response, ignore") {
						t.Fatalf("%s at %s: %d %s", bad.name, g.action, code, raw)
					}
				}
				// the thread still waits at the gate, not failed
				th := call(t, "", "GET", s.base+"/threads/"+s.thread, nil)
				if th["status"] != "interrupted" {
					t.Fatalf("thread %v after refused answers", th["status"])
				}
				s.resume(v.typ, v.args)
				if act, _ := s.gate(); act != v.then {
					t.Fatalf("after a valid %s at %s: waiting at %q, want %q (%v)", v.typ, g.action, act, v.then, s.values["gate_error"])
				}
				if ge, _ := s.values["gate_error"].(string); ge != "" {
					t.Fatalf("valid %s at %s: %s", v.typ, g.action, ge)
				}
			}
			if g.action == "Review final report" && s.values["report_id"] == nil {
				t.Fatal("the approval after refused answers saved nothing")
			}
		})
	}
}

// Outside the server's check (a resume through the graph's own API), an answer a gate does not
// take does not fail the run: the gate asks again with what was wrong, and the next valid answer
// is applied.
func TestGateAsksAgainAfterAnAnswerItDoesNotTake(t *testing.T) {
	t.Parallel()
	_, g := harness(t, analyst.Options{}, nil)
	r := &run{t: t, g: g, thread: "gate-bad", user: "dana"}
	r.ask(voltraQuestion, nil)
	if r.action != "Review research plan" {
		t.Fatalf("waiting at %q", r.action)
	}
	for _, bad := range []any{
		[]any{map[string]any{"type": "approve"}},
		[]any{map[string]any{"type": "response", "args": 42}},
		"not an answer",
	} {
		r.finish(r.g.Invoke(context.Background(), analyst.State{}, append(r.options(), graph.Resume(bad))...))
		if r.action != "Review research plan" {
			t.Fatalf("waiting at %q after the bad answer %v", r.action, bad)
		}
		if ge := r.state.GateError; !strings.Contains(ge, "accept, edit, response, ignore") && !strings.Contains(ge, "needs its text") {
			t.Fatalf("gate error %q", ge)
		}
	}
	r.resume("accept", nil)
	if r.action != "Review discoveries" || !r.state.PlanApproved || r.state.GateError != "" {
		t.Fatalf("the valid answer was not applied: at %q, %q", r.action, r.state.GateError)
	}
}

// Discovery IDs are unique within a session and keep their meaning across resumes and research
// rounds; the saved report's ID is a UUID.
func TestDiscoveryAndReportIDs(t *testing.T) {
	t.Parallel()
	s := askedVoltra(t)
	s.resume("accept", nil)
	s.wantGate("Review discoveries")
	ids := func() map[string]string { // ID → what it is about
		t.Helper()
		out := map[string]string{}
		for _, d := range s.values["discoveries"].([]any) {
			m := d.(map[string]any)
			id, _ := m["id"].(string)
			if _, dup := out[id]; dup || id == "" {
				t.Fatalf("discovery ID %q is not unique: %v", id, s.values["discoveries"])
			}
			out[id] = fmt.Sprint(m["task_id"], m["assumption"], m["ref"])
		}
		return out
	}
	first := ids()
	if len(first) < 3 {
		t.Fatalf("too few discoveries to tell: %v", first)
	}
	// a refused answer and a new research round keep every ID on the same discovery
	code, _ := request(t, "", "POST", s.base+"/threads/"+s.thread+"/runs/wait", map[string]any{"assistant_id": "analyst",
		"command": map[string]any{"resume": []any{map[string]any{"type": "nope"}}}})
	if code != 400 {
		t.Fatalf("bad answer: %d", code)
	}
	s.resume("response", "What do couriers pay per month for a leased e-bike?")
	s.wantGate("Review discoveries")
	second := ids()
	if len(second) <= len(first) {
		t.Fatalf("the follow-up added no discovery: %v", second)
	}
	for id, what := range first {
		if second[id] != what {
			t.Fatalf("discovery %s was %s, now %s", id, what, second[id])
		}
	}
	// ignoring one discovery targets exactly it
	var target string
	for id := range first {
		target = id
		break
	}
	s.resume("response", "ignore "+target)
	s.wantGate("Review discoveries")
	if ign := fmt.Sprint(s.values["ignored_findings"]); ign != "["+target+"]" {
		t.Fatalf("ignored %s, want [%s]", ign, target)
	}
	s.resume("accept", nil)
	s.resume("accept", nil)
	id, _ := s.values["report_id"].(string)
	if _, err := uuid.Parse(id); err != nil || len(id) != 36 {
		t.Fatalf("report ID %q is not a UUID: %v", id, err)
	}
}

// The questions the analyst writes read as sentences: the plan's questions are written around
// what the request names, never around the user's sentence, and a direction given at the
// discovery gate becomes a question without its instruction words.
func TestQuestionsReadAsSentences(t *testing.T) {
	t.Parallel()
	s := askedVoltra(t)
	plan := s.values["research_plan"].(map[string]any)
	for _, q := range plan["sub_questions"].([]any) {
		text := q.(map[string]any)["question"].(string)
		if strings.Contains(text, "Is Voltra a threat") || !strings.HasSuffix(text, "?") || strings.Count(text, "?") != 1 {
			t.Errorf("plan question %q splices the request or is not one question", text)
		}
	}
	s.resume("accept", nil)
	s.resume("response", "Please look into Spinlane's courier battery subscription in Vienna")
	s.wantGate("Review discoveries")
	var asked string
	for _, f := range s.findings() {
		if q := f.(map[string]any)["question"].(string); strings.Contains(q, "Vienna") {
			asked = q
		}
	}
	if asked != "What do we know about Spinlane's courier battery subscription in Vienna?" {
		t.Errorf("the direction became %q", asked)
	}
	if act, _ := s.gate(); act == "Question" {
		t.Error("the supervisor asked the user about a question it wrote")
	}
}

// The report cites each source once per claim and each finding's sources are distinct; once a
// report is saved, a new session's findings cite it at most once each.
func TestReportCitesDistinctSources(t *testing.T) {
	t.Parallel()
	hs := served(t, analyst.Options{})
	for round := 0; round < 2; round++ {
		s := newSession(t, hs, "")
		s.ask(voltraQuestion, dana)
		s.resume("accept", nil)
		for id, f := range s.findings() {
			seen := map[string]bool{}
			for _, src := range f.(map[string]any)["sources"].([]any) {
				ref := src.(map[string]any)["ref"].(string)
				if seen[ref] {
					t.Errorf("round %d: finding %s cites %s twice", round, id, ref)
				}
				seen[ref] = true
			}
		}
		s.resume("accept", nil)
		draft := s.values["report_draft"].(string)
		for _, line := range strings.Split(draft, "\n") {
			cites := citeRe.FindAllString(line, -1)
			seen := map[string]bool{}
			for _, c := range cites {
				if seen[c] {
					t.Errorf("round %d: %q repeats the citation %s", round, line, c)
				}
				seen[c] = true
			}
		}
		s.resume("accept", nil)
		if s.values["report_id"] == nil {
			t.Fatal("not saved")
		}
	}
}

var citeRe = regexp.MustCompile(`\[\^?\d+\]`)
