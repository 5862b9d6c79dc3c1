package vesper

import (
	"slices"
	"testing"
)

// The offline understanding of vesper's four intents (its domains), in paraphrases: at least
// thirty per domain, in other word orders, with synonyms, abbreviations and typos. A paraphrase
// is understood when the request is routed to its domain's agent. Known misses are listed; the
// test fails when one of them is understood (so the list shrinks) or when another is missed.

var domainPhrases = map[string][]string{
	"dayahead_agent": {
		"What was the average day-ahead price for NP15 in CAISO for 2025 from Ascend?",
		"average day ahead price NP15 CAISO 2025 Ascend",
		"Ascend's 2025 average price for CAISO NP15?",
		"For 2025, what's Ascend's mean day-ahead price at NP15 in CAISO?",
		"NP15 CAISO 2025 Ascend average price please",
		"avg price np15 caiso 2025 ascend",
		"What is the averge day-ahead price for NP15 in CAISO in 2025 by Ascend?",
		"Give me the day-ahead average for SP15, CAISO, 2026, Hitachi",
		"How much is the yearly average DA price at SP15 in CAISO for 2026 per Hitachi?",
		"Hitachi forecast: average price SP15 CAISO 2026",
		"what does hitachi forecast as the average price in 2026 for sp15 caiso",
		"Tell me the annual average day-ahead price, ERCOT HB_NORTH, 2025, Ascend",
		"ERCOT north hub 2025 average price from ascend?",
		"average $/MWh for NP15 CAISO 2025 Ascend",
		"Compare Ascend vs Hitachi for SP15 in CAISO for 2025",
		"Ascend versus Hitachi day-ahead prices SP15 CAISO 2025",
		"How do Hitachi and Ascend compare on SP15 prices in CAISO for 2025?",
		"Which vendor is higher for SP15 CAISO 2025, Ascend or Hitachi?",
		"List available curve files",
		"Which curves are available for ERCOT?",
		"what vendor curve files do we have for CAISO",
		"show me the available forecast curves",
		"What curve files exist for Hitachi?",
		"Day-ahead price forecast for NP15 2025 from ascend in caiso",
		"price for np15 in caiso 2025, ascend's curve",
		"What's the 2025 Ascend price forecast at NP15 (CAISO)?",
		"Ascend NP15 CAISO 2025: average price?",
		"I need the average day-ahead price in CAISO at NP15 for 2025 according to Ascend",
		"Average day-ahead prce for NP15 in CAISO for 2025 from Ascnd?",
		"can you tell me hitachi's average price for np15 in caiso for the year 2026",
	},
	"price_curve_agent": {
		"Show me the hourly average price for CAISO NP15 in January 2025",
		"hourly prices NP15 CAISO January 2025",
		"What does the hourly price shape look like for NP15 in CAISO in 2025?",
		"price by hour of day for SP15 CAISO 2025",
		"What is the peak vs off-peak spread for ERCOT HB_NORTH?",
		"peak versus off-peak prices ERCOT HB_NORTH 2025",
		"how big is the on-peak/off-peak spread at HB_NORTH in ERCOT for 2025",
		"Compare hourly prices between NP15 and SP15 for 2025",
		"NP15 vs SP15 spread 2025",
		"what's the spread between NP15 and SP15 in 2025?",
		"compare hub zones NP15 and SP15 for 2025",
		"Which hours are the most expensive at NP15 in CAISO in 2025?",
		"When is the price highest during the day for SP15 in CAISO 2025?",
		"seasonal price pattern for NP15 CAISO 2025",
		"show the hourly shape for ERCOT HB_NORTH in July 2025",
		"Hourly averge price for CAISO NP15 in Januray 2025",
		"peak and off peak for NP15 in CAISO 2025",
		"What is the off-peak price at SP15 in CAISO for 2025?",
		"Compare CAISO and ERCOT prices for 2025",
		"CAISO vs ERCOT 2025 prices",
		"hour by hour prices at NP15, CAISO, 2025",
		"the daily price curve by hour at SP15 in CAISO in 2025",
		"what is the spread NP15 to SP15 in march 2025",
		"peak hours price for HB_NORTH ERCOT 2025",
		"How do NP15 and SP15 hourly prices differ in 2025?",
		"give me the price shape by hour for np15 caiso 2025",
		"Show hourly prices for SP15 in CAISO in summer 2025",
		"Peak vs offpeak spread, ERCOT, HB_NORTH",
		"compare the hub-zones SP15 and NP15 for 2026",
		"in 2025 which hour has the lowest price at NP15 in CAISO?",
	},
	"pbi_metrics_agent": {
		"Which Power BI reports had the most views last month?",
		"most viewed reports last month",
		"top Power BI reports by views in January",
		"What were the most popular reports last month?",
		"Who are the top 10 Power BI users this quarter?",
		"top users of power bi this quarter",
		"who uses Power BI the most this quarter?",
		"Show me the usage trend for the PER dashboard",
		"usage trend of the Budget Tracker",
		"How many views did the Budget Tracker get in January?",
		"How many people opened the Day-Ahead Curves Dashboard last month?",
		"Which reports had the most unique viewers last month?",
		"pbi top reports this year",
		"Top 5 most viewed reports in 2025",
		"which dashboards are viewed the most?",
		"How is the PER dashboard's usage trending over time?",
		"Who viewed the Budget Tracker last week?",
		"power bi usage last month",
		"number of views per report last month",
		"most-viewed power bi reports this quarter",
		"Which Power BI report is the most popular?",
		"show the top Power BI viewers in January",
		"whats the most viewd report last month",
		"report views by month for the Budget Tracker",
		"how many users looked at the PER dashboard this month?",
		"Top reports by views, last 30 days",
		"Which reports were viewed most in Q1?",
		"Power BI: top 10 users last month",
		"trend of views for the Day-Ahead Curves Dashboard",
		"Most used reports in Power BI this year",
	},
	"per_agent": {
		"What is the health status of Nazareth Solar?",
		"Nazareth Solar health?",
		"How is Nazareth Solar doing?",
		"is nazareth solar on track",
		"health of nazreth solar",
		"Show me all projects at risk",
		"Show me all projects that are off track (red)",
		"which projects are red?",
		"What is the budget vs actuals for Nazareth Solar?",
		"Nazareth Solar budget versus actual spend",
		"how much has Nazareth Solar spent against budget?",
		"List all Stage 3 projects and their COD dates",
		"stage 3 projects with COD",
		"What milestones changed this week?",
		"What milestone dates changed in the last week?",
		"which milestones slipped last week?",
		"When is Sierra Wind's COD?",
		"milestone dates for Kern Wind",
		"What are the high risks on Sierra Wind?",
		"Show me all high risks",
		"portfolio overview",
		"Give me a summary of the project portfolio",
		"Who is the offtaker for Nazareth Solar?",
		"What is the PPA tenor of Sierra Wind?",
		"what tasks are at risk for Kern Wind",
		"Sierra Wind status",
		"list the wind projects",
		"How many projects are in stage 4?",
		"budget overview sierra wind",
		"any project milestones pushed this month?",
	},
}

// domainMisses are the paraphrases the offline path does not route to their domain yet.
var domainMisses = map[string]bool{}

func TestDomainParaphrases(t *testing.T) {
	t.Parallel()
	routeParaphrases(t, domainPhrases, domainMisses, "domainMisses")
}

// routeParaphrases asks each domain's paraphrases through the whole graph and counts those
// routed to the domain's agent; a miss not listed in misses (named missesName in the messages),
// or a listed one understood, fails the test, as does a domain with fewer than thirty.
func routeParaphrases(t *testing.T, phrases map[string][]string, misses map[string]bool, missesName string) {
	t.Helper()
	a := setup(t, assistantConfig{})
	for _, agent := range []string{"dayahead_agent", "price_curve_agent", "pbi_metrics_agent", "per_agent"} {
		ok := 0
		for _, q := range phrases[agent] {
			st := ask(t, a, caller("vesper"), q)
			hit := slices.Contains(st.Agents, agent)
			switch {
			case hit:
				ok++
				if misses[q] {
					t.Errorf("%q is routed to %s now: take it off %s", q, agent, missesName)
				}
			case !misses[q]:
				t.Errorf("%q: routed to %v, want %s", q, st.Agents, agent)
			}
		}
		if n := len(phrases[agent]); n < 30 {
			t.Errorf("%s has %d paraphrases, want at least 30", agent, n)
		}
		t.Logf("%s: %d of %d understood", agent, ok, len(phrases[agent]))
	}
}
