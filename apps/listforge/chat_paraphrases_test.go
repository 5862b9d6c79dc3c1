package listforge_test

import (
	"context"
	"testing"

	"github.com/trellis-go/trellis/apps/listforge"
	"github.com/trellis-go/trellis/apps/listforge/pack"
	"github.com/trellis-go/trellis/model/offline/packtest"
)

// paraphrases are thirty more ways to write each kind of message, beyond chat_phrasings_test.go:
// other word orders, synonyms, typos and informal spellings. The key is the intent ("research",
// "action:<field>") or, for a question, its topic.
var paraphrases = map[string][]string{
	"price": {"how much should i charge for this", "whats this thing worth", "ideal listing price?", "what price would you put on it",
		"pricing advice please", "what should i price it at", "how much is this worth on ebay", "what can i sell this for", "what would you list it at",
		"what's fair to ask for it", "recomend a price", "wat should i ask", "how much could this go for", "estimate its value", "what is it worth now",
		"put a price on it for me", "what's the right asking price", "the price you'd suggest?", "how much money can i make on this",
		"valuation please", "what's a sensible price", "whats the best price to list", "price suggestion?", "how much do these go for",
		"what should i be asking", "value?", "how much is it", "suggest a listing price for me", "how much would you ask for this", "what's the price point"},
	"count": {"how many comps did you use", "how many listings did you look at", "number of sales you found?", "how many comparable sales",
		"comps count?", "how many matches were there", "how many were kept", "how many items did you compare", "how manny comps", "how many sold ones",
		"how many did you throw away", "how many results", "how many listings went into it", "how many were rejected", "how many were similar",
		"how many comparables in total", "how many are in the sample", "number of listings used", "how many did you drop", "how many sales were used for the price",
		"count of comps", "how many prices did you look at", "how many were ignored", "how many made the cut", "how many sold listings did you find",
		"how many did you find", "sample size?", "how many records", "how many are active", "how many items went into the estimate"},
	"why": {"why that price", "why is the price so low", "explain your reasoning", "how did you get to that price", "whats the price based on",
		"why did you suggest that", "explain the number", "how come it's that price", "why so cheap", "can you explain the range", "why not higher",
		"explain it to me", "how did you work that out", "why $250 and not more", "why is the target that", "justify that number", "whats the reasoning behind it",
		"how was the target calculated", "where did that figure come from", "break that down", "why this range", "explian the price", "why is confidence so low",
		"how did you come up with that", "why that much", "what's the rationale behind the target", "why is the ceiling so low", "why", "why the floor",
		"explain the target price"},
	"compare": {"is $300 too much", "is $120 too low", "would $200 be fair", "is 250 reasonable", "is my price too high", "am i asking too much",
		"is my asking price fair", "compare $400 with the research", "is $180 ok", "is $90 too cheap", "is it overpriced at $500", "how does $220 compare",
		"is my price ok", "can i get $350 for it", "could i ask $275", "is $150 fair for this", "is my price in line with the market", "would $310 work",
		"is 199 too high", "is $60 a fair price", "my price versus the comps?", "is what im asking reasonable", "am i underpriced", "is $450 too expensive",
		"is $230 right", "compare my price", "is my price above or below", "is $275 reasonable for it", "how does my price stack up", "is $320 too high for this"},
	"comps": {"show the comps", "what did other ones sell for", "list the comparables", "which sales are similar", "show me comparable listings",
		"what have similar items sold for", "show me what sold", "give me examples of sales", "what did they go for", "recent sales?", "show similar sales",
		"what evidence did you use", "the closest matches?", "which listings did you use", "show comps please", "what are similar ones selling for",
		"comparables please", "what sold lately", "any similar listings", "what did the others go for", "show me the closest comps", "list recent sales",
		"show me the comparable sales", "comparable items?", "what similar things sold for", "examples please", "which comps", "what did similar ones go for",
		"sales of similar items", "show me the matches"},
	"demand": {"how fast will it sell", "how quickly does it sell", "is there demand for it", "how long will it take to sell", "what's the demand like",
		"will it sell fast", "how many days to sell", "whats the sell-through", "how much competition is there", "is there much competition",
		"how long do these take to sell", "how quick will this go", "demand?", "is it in demand", "how fast do these sell", "will this sell quickly",
		"how long until it sells", "how many competitors", "how long does it usually take", "sell fast?", "what's the sell-through rate", "days to sell?",
		"how fast can i sell it", "is demand high", "how long to sell", "how quickly can i move it", "competition?", "how much demand is there",
		"how fast would it go", "are there many competitors"},
	"missing": {"what info is missing", "what would improve the research", "how can i make it better", "what else do you need", "what's missing",
		"how to improve accuracy", "what would make it more accurate", "anything missing", "what more info do you need", "improve the estimate",
		"what else should i add", "missing details?", "what else would help", "how do i improve it", "what is missing from the listing",
		"how could the research be better", "what info would help", "better accuracy?", "what else do you want to know", "how can the estimate be improved",
		"what's missing for a better price", "how do i get better accuracy", "what else", "any missing info", "what extra info do you need",
		"missing anything?", "what could be improved", "what more info would help", "improve accuracy please", "what would make this better"},
	"identify": {"what is it exactly", "which model is it", "what model is this", "can you identify it", "identify this item", "what brand is it",
		"which brand", "what model do i have", "identify the product", "what's the brand", "which model is this exactly", "what is it",
		"identify please", "can you identify the model", "what model", "brand?", "whats the brand of this", "which model do you think it is",
		"did you identify it", "what product is it identified as", "identification?", "who makes it, which brand", "what's the model", "identify",
		"is the model identified", "which model did you find", "what brand and model", "what model number is it", "can you tell which model", "the brand please"},
	"research": {"refresh the research", "research it again", "rerun the research please", "redo research", "could you refresh it",
		"please redo the research", "refresh it", "run it again", "re-run the research", "find some new comps", "get fresh comps", "update the comps please",
		"research this again", "start a new research", "refresh pricing", "do it again with new data", "look it up again please", "research please",
		"rerun", "new research please", "run research", "can you research it", "pls refresh", "redo", "start the research", "refresh comps",
		"research the item", "do a fresh research", "refresh the data", "re-research it"},
	"action:defaultPrice": {"set price to 120", "change price to $99", "price it at 150", "make the price $75", "update price to 60",
		"set the price at $200", "list it at $130", "list it for 85", "change the price to 45.50", "set price $300", "update the price to 99",
		"set the price to 110 please", "change the price to 210", "make the price 95", "price it at $60", "set price at 42", "update price 88",
		"change price to 175", "set the price to $1200", "list it at 65", "make price 70", "set the price as 80", "price it at 33",
		"update the price to $140", "change the price at 55", "set price to $19.99", "make the price 250 please", "list it for $99", "set the price to 15", "change price 64"},
	"action:title": {"change the title to Sony headphones", "set the title to Nikon F3 body", "rename the title to Red mixer",
		"update the title to KitchenAid mixer red", "make the title Vintage Nikon", "set title to Apple iPhone 12", "change title to Blue bike",
		"title: Canon AE-1 film camera", "update title to Dyson V8 vacuum", "set the title as Lego set 10265", "change the title to Nintendo Switch",
		"make the title: Bose QC35", "set the title to Instant Pot 6qt", "change title to Old record player", "update the title to Fender guitar",
		"set title: Samsung Galaxy S21", "rename title to Leather jacket", "change the title to Kindle Paperwhite", "set the title to Weber grill",
		"update title to Garmin watch", "change the title to Gopro Hero 9", "set title to Xbox One S", "make the title Herman Miller chair",
		"change title: Ray-Ban sunglasses", "set the title to Sonos One speaker", "update the title: iPad Air", "change the title to Dell monitor",
		"set title to Vitamix blender", "rename the title to Patagonia fleece", "change the title to Pioneer turntable"},
	"action:condition": {"set the condition to used", "change the condition to like new", "mark the condition as new", "condition: for parts",
		"update condition to good", "set condition to open box", "change condition to used", "make the condition like new", "set the condition as refurbished",
		"change the condition to new", "update the condition to fair", "mark condition as used", "set condition: like new", "change condition to very good",
		"make condition new", "update the condition to open box", "set the condition to for parts", "change the condition to excellent",
		"mark the condition used", "set condition to good", "condition: new", "update condition to like new", "change condition: used",
		"set the condition to new please", "make the condition used", "change the condition to acceptable", "set the condition to mint",
		"update the condition as used", "change the item's condition to good", "set the condition to damaged"},
}

// lfModel is the offline model with listforge's pack, as the server gives it to the chat.
var lfModel = packtest.Model(pack.Pack)

// route is what the chat understands of text on the offline path.
func route(t *testing.T, text string) listforge.Route {
	t.Helper()
	r, err := listforge.Understand(context.Background(), lfModel, text)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// knownMisses are paraphrases the offline path does not understand yet, with why.
var knownMisses = map[string]string{}

// understood is what the chat understands of a message: the intent ("research", "action:<field>")
// or, for a question, its topic.
func understood(t *testing.T, text string) string {
	t.Helper()
	r := route(t, text)
	switch r.Intent {
	case "research":
		return "research"
	case "action":
		return "action:" + r.Update.Field
	}
	return r.Topic
}

// TestChatParaphrases: each paraphrase is understood as its intent; the figures per intent are
// logged (go test -run TestChatParaphrases -v).
func TestChatParaphrases(t *testing.T) {
	t.Parallel()
	packtest.Paraphrases(t, paraphrases, knownMisses, func(text string) string { return understood(t, text) })
}
