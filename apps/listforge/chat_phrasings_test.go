package listforge_test

import (
	"testing"
)

// Thirty phrasings for each kind of message: the intent (question, action, research) and, for
// questions, the topic the answer and its action come from.
var phrasings = map[string][]string{
	"price": {"What price should I list this for?", "What should I ask for it?", "How much is it worth?", "What's it worth?", "What would you charge?",
		"How much should I sell it for?", "What's a good price?", "Suggest a price", "Give me a price", "What is the value of this?",
		"How much can I get for it?", "What's the going rate?", "Price?", "what should i list it at", "How much do you think it'll fetch?",
		"What would it go for?", "Recommend a listing price", "Where should I price this?", "What number should I put on it?", "What's the market value?",
		"how much", "What price do you recommend?", "What's this worth used?", "Tell me the price", "What should the listing price be?",
		"Best price to ask?", "What's a realistic price?", "How much would a buyer pay?", "What's your price suggestion?", "Help me price this"},
	"count": {"How many comparables did you find?", "How many comps are there?", "How many sales did you look at?", "How many listings were used?",
		"Number of comparables?", "How many were dropped?", "how many comps", "Count the comparables", "How many similar items sold?", "What's the sample size?",
		"How big was the sample?", "How many results did the search return?", "How many listings were excluded?", "How many matched my variant?",
		"How many comps went into the price?", "Total comparables?", "how many sold listings", "How many did you keep?", "How many were the same model?",
		"How many active listings are there?", "How many data points?", "Number of sales used", "How many comparables were relevant?",
		"How many outliers were removed?", "How many of them were accessories?", "How many listings did you find in total?", "How many were thrown out?",
		"how many were considered", "Give me a count of the comps", "How much data is this based on, how many sales?"},
	"why": {"Why this price?", "Why is it so low?", "Why so high?", "How did you get that number?", "How did you come up with the price?", "Explain the price",
		"What is that based on?", "Based on what?", "Why $300?", "Why not more?", "Can you explain the target?", "Justify the price",
		"Where does that number come from?", "How was the price calculated?", "What's the reasoning?", "Break it down for me", "Why that range?",
		"explain how you priced it", "How did you arrive at that?", "What went into the price?", "Why is the floor so low?", "Why is the ceiling that high?",
		"What's the rationale?", "How did you calculate the target?", "why", "Why did you pick that price?", "Explain the bands", "How did you decide on the price?",
		"Why is the confidence low?", "How did you work out the price?"},
	"compare": {"Is $350 too high?", "Is my price too low?", "Is $200 fair?", "Compare my price with the research", "Am I overpriced?", "Is it underpriced?",
		"Is $420 reasonable?", "How does my price compare?", "Is $150 a good price?", "Is my asking price OK?", "Is that too much?", "Is $99 too cheap?",
		"My price vs the market?", "Is $500 ok?", "Could I get $400?", "Can I ask $380?", "Is what I'm asking fair?", "Is $275 in line with the comps?",
		"how does $320 stack up", "above or below the market?", "Is my price in line?", "compare $250 to the target", "Is $600 too expensive?",
		"Is it a fair price at $180?", "Would $260 be reasonable?", "Is $240 right?", "Is my price overpriced?", "Is $310 versus the target ok?",
		"Is my price reasonable?", "Could I ask $450?"},
	"comps": {"What did similar ones sell for?", "Show me the comparables", "What are the comps?", "Show me recent sales", "Any examples?",
		"What did others sell for?", "Show me the evidence", "What are the closest matches?", "List the comparable sales", "Show me similar listings",
		"What have they gone for?", "Sales history?", "What did other ones go for?", "show comps", "Which listings are comparable?", "Closest comparables?",
		"What sold recently?", "Show me the listings", "Give me some examples", "What are similar items selling for?", "What are the matches?",
		"recent sales please", "What were the comparable listings?", "Show me other listings", "Which sales did you use as evidence?", "Any comparable sales?",
		"What have similar ones sold for lately?", "Show me the sales", "comps?", "What evidence do you have?"},
}

var intents = map[string][]string{
	"action": {"Set the price to $120", "change the title to Sony XM4 black", "list it at 99", "mark the condition as like new please", "Update the description to mention the box",
		"set the price to 250", "Change the price to $199.99", "rename the title to Vintage camera", "make the condition used", "update the price to 300",
		"set status to ready", "change the condition to for parts", "Set the title to Apple iPhone 13 128GB", "use $150 as the price", "list it for 75",
		"change currency to EUR", "set the description to Works perfectly", "update the title to Nintendo Switch OLED", "make the price 180", "price it at 140",
		"Change the status to listed", "set the condition to new", "update condition to open box", "change the price to 89", "set price 60",
		"mark the status as sold", "Change the title to Canon EF 50mm lens", "update the price to $410", "set the price at 95", "make the title shorter: Sony headphones"},
	"research": {"Can you refresh the research?", "please re-run the research, it's old", "research it", "refresh", "redo the research", "run the research again",
		"Look it up again", "find new comps", "find fresh comps", "update the comps", "rerun research", "refresh the pricing", "Research this item",
		"Please research it again", "re-run it", "new comps please", "update the pricing data", "refresh the research please", "can you research this?",
		"redo it with fresh data", "do the research", "start research", "research again", "look up again", "Refresh the comps", "re-research",
		"research the item now", "please refresh", "update prices from ebay", "run a fresh research"},
}

func TestChatPhrasings(t *testing.T) {
	t.Parallel()
	for topic, qs := range phrasings {
		if len(qs) < 30 {
			t.Errorf("%s: %d phrasings", topic, len(qs))
		}
		for _, q := range qs {
			r := route(t, q)
			if r.Intent != "question" {
				t.Errorf("%q: intent %s, want question", q, r.Intent)
			}
			if r.Topic != topic {
				t.Errorf("%q: topic %s, want %s", q, r.Topic, topic)
			}
		}
	}
	for intent, qs := range intents {
		if len(qs) < 30 {
			t.Errorf("%s: %d phrasings", intent, len(qs))
		}
		for _, q := range qs {
			if got := route(t, q).Intent; got != intent {
				t.Errorf("%q: intent %s, want %s", q, got, intent)
			}
		}
	}
}
