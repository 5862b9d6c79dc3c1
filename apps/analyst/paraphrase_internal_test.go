package analyst

import (
	"context"
	"testing"

	"github.com/trellis-go/trellis/apps/analyst/pack"
	"github.com/trellis-go/trellis/model/offline"
)

// The offline understanding of a reply to the final report, in paraphrases: at least thirty per
// route (approve, question, research, replan), in other word orders, with synonyms, typos and
// the format named or not. A paraphrase is understood when it takes its route (and, for an
// approval naming a format, that format). Known misses are listed, and the test fails when one
// of them is understood (so the list shrinks) or when another paraphrase is missed.

type paraphrase struct {
	text, format string
}

var finalRoutePhrases = map[string][]paraphrase{
	"approve": {
		{"approve", ""}, {"Approved, save it as PDF", "pdf"}, {"looks good", ""}, {"lgtm", ""}, {"ship it", ""},
		{"perfect, save it", ""}, {"Looks great, please save", ""}, {"save it as docx", "docx"}, {"save the report", ""},
		{"ok save", ""}, {"great job, save it in markdown", "markdown"}, {"I approve this report", ""},
		{"This is good, go ahead and save it", ""}, {"yes, save", ""}, {"Fine by me, save it", ""}, {"apporve", ""},
		{"save as json", "json"}, {"Good to go, save as a Word document", "docx"}, {"all good, store it", ""},
		{"That works. Save.", ""}, {"Please save the report as a PDF", "pdf"}, {"accept and save", ""}, {"publish it", ""},
		{"ok, finalize it", ""}, {"we're done, save", ""}, {"save it please", ""}, {"approve it, pdf please", "pdf"},
		{"Looks good to me", ""}, {"excellent, save as markdown", "markdown"}, {"sounds good, keep it", ""},
	},
	"question": {
		{"What is Voltra's market share?", ""}, {"why is the margin falling?", ""}, {"Where does the battery cost figure come from?", ""},
		{"how confident are you in the Madrid numbers?", ""}, {"Which source says that?", ""}, {"What does the report say about pricing?", ""},
		{"Can you explain the second recommendation?", ""}, {"what's the biggest risk?", ""}, {"who are our main competitors in Iberia?", ""},
		{"how big is the campus market", ""}, {"what did the survey find about churn?", ""}, {"When does the Tidewater pilot start?", ""},
		{"is the Lisbon tender still open?", ""}, {"explain the SWOT weaknesses", ""}, {"what are the assumptions behind the forecast?", ""},
		{"How does Spinlane price its subscription?", ""}, {"which city is the most promising?", ""}, {"What's the source for the 12% growth?", ""},
		{"what do you mean by unit economics?", ""}, {"How much will batteries cost in 2027?", ""}, {"Why did you rank Madrid first?", ""},
		{"how reliable is the web source?", ""}, {"what is the payback period?", ""}, {"Summarize the key findings for me", ""},
		{"What would change your conclusion?", ""}, {"Does the report cover Vienna?", ""}, {"what's the revenue impact?", ""},
		{"Could you clarify the threat from Voltra?", ""}, {"how many fleets did we survey?", ""}, {"Which competitor grows fastest?", ""},
	},
	"research": {
		{"research Voltra's pricing further", ""}, {"dig deeper into the Madrid tender", ""}, {"investigate battery supply risks", ""},
		{"look into Spinlane's Vienna subscription", ""}, {"find out whether Voltra is hiring", ""}, {"please do more research on the campus market", ""},
		{"research more about fleet leasing", ""}, {"also research CityGlide's funding", ""}, {"dig into the Lisbon city meeting", ""},
		{"can you look at the university interviews", ""}, {"re-research the pricing section", ""}, {"research again the Iberian market", ""},
		{"investigate further the churn figures", ""}, {"look into the B2B fleets opportunity", ""}, {"I want more research on charging costs", ""},
		{"go dig into the competitor pricing", ""}, {"find out more about Northstar's partners", ""}, {"research the regulations in Spain", ""},
		{"explore the delivery firm interview more", ""}, {"examine the brand tracker data more closely", ""}, {"need deeper research on Tidewater", ""},
		{"check the battery market reports again", ""}, {"look deeper at UrbanHop's profile", ""}, {"please investigate the risk register", ""},
		{"further research on subscription models", ""}, {"reserch Voltra pricing more", ""}, {"dig deeper on hiring plans", ""},
		{"do another research round on Madrid", ""}, {"research further into sustainability", ""}, {"investigate the Q4 finance numbers", ""},
	},
	"replan": {
		{"re-plan", ""}, {"replan with a focus on Spain", ""}, {"new plan please", ""}, {"start over", ""}, {"change the plan", ""},
		{"back to the plan", ""}, {"let's go back to planning", ""}, {"Let's start again from scratch", ""}, {"rethink the plan", ""},
		{"the plan is wrong, redo it", ""}, {"make a new plan about Iberia", ""}, {"redo the plan", ""}, {"restart the research plan", ""},
		{"go back to the plan", ""}, {"I want a different plan", ""}, {"scrap this and replan", ""}, {"revise the plan", ""},
		{"change the research plan to cover Vienna", ""}, {"plan again", ""}, {"start from the beginning", ""}, {"re plan", ""},
		{"new research plan on fleets", ""}, {"let's rework the plan", ""}, {"rebuild the plan around pricing", ""},
		{"throw away the plan and start over", ""}, {"back to planning please", ""}, {"replna", ""}, {"we need a new plan", ""},
		{"rewrite the plan", ""}, {"restart with a new plan", ""},
	},
}

// finalRouteMisses are the paraphrases the offline model does not understand yet. "replna", two
// edits (a transposition) from "replan", is a synonym in the pack.
var finalRouteMisses = map[string]bool{}

// offlineRouter is an analyst whose fast role is the offline model with the analyst's pack.
func offlineRouter() *Analyst {
	return &Analyst{fast: offline.New(&offline.Options{Packs: []*offline.Pack{pack.Pack}})}
}

func TestFinalRouteParaphrases(t *testing.T) {
	t.Parallel()
	a := offlineRouter()
	ctx := context.Background()
	for _, route := range []string{"approve", "question", "research", "replan"} {
		ok := 0
		for _, p := range finalRoutePhrases[route] {
			got, format, err := a.routeFinal(ctx, p.text)
			if err != nil {
				t.Fatalf("%q: %v", p.text, err)
			}
			hit := got == route && (p.format == "" || format == p.format)
			switch {
			case hit:
				ok++
				if finalRouteMisses[p.text] {
					t.Errorf("%q is understood now (route %s): take it off finalRouteMisses", p.text, got)
				}
			case !finalRouteMisses[p.text]:
				t.Errorf("%q: route %q format %q, want %s %s", p.text, got, format, route, p.format)
			}
		}
		if n := len(finalRoutePhrases[route]); n < 30 {
			t.Errorf("%s has %d paraphrases, want at least 30", route, n)
		}
		t.Logf("%s: %d of %d understood", route, ok, len(finalRoutePhrases[route]))
	}
}
