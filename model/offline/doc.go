// Package offline is the model trellis runs on when no provider is configured: deterministic,
// rule-based, and documented, so every application's main flows work on a fresh machine with no
// key and no network. It is not a language model and says so: every message it writes carries
// the metadata "provider": "offline", "offline": true and "offline_rule" (which rule answered),
// which programs read with [IsOffline]; every text answer also ends with the visible label
// [Marker] for people ([Unlabelled] removes it).
//
// For each request it applies the first rule that fits:
//
//  1. After tool results (the conversation ends with tool turns), when the user's request was given
//     in steps ("look up X and then convert it", also "then", "depois", "luego", "puis", "dann")
//     and a later step's tools have not been called since the user's message, it calls them (rule
//     "tool_chain"), filling a required argument the step's words lack from the earlier results.
//     Otherwise it writes the answer from the results of every step:
//     a Markdown table for a list of records (or for the first list of records inside an object,
//     with the object's other fields listed above it), a bullet list for a record, the text itself
//     otherwise, and a note for each tool that reported an error. With a Schema it fills the
//     schema instead, reading the results as well.
//  2. With a Schema (structured output) it fills the schema from the user's last message.
//  3. With tools (and ToolChoice not "none") it scores every tool against the user's last message:
//     three points per word of the tool's name, two per enum value of its parameters, one per word
//     of its description, with synonyms ("change" counts as "update", "mostra" as "show"; an app's [Pack] adds its own),
//     plurals, shared five-letter stems, and four points when the message holds a URL and the
//     tool takes one. The best tool scoring 2.5 or more is called, with arguments filled from its
//     schema. A message of clauses joined by "and" ("e", "y", "et", "und") whose clauses (each
//     scoring at least half the best clause's) point to
//     different tools calls them all, in parallel, in one turn; a request in steps calls its first
//     step's tools only. When a required argument cannot be filled it asks for it instead,
//     naming the argument and its description. A ToolChoice naming a tool, or "required", calls
//     the best tool whatever its score.
//  4. Pictures in the last user message, with no tool called: it says what each is labelled with
//     (rule "vision"; see Images below).
//  5. Otherwise it recognises utility requests in the last user message or a short system prompt
//     (a title, a summary, follow-up questions) and writes them from the conversation; anything
//     else gets a short reply that says no model is configured and lists the tools it can use.
//
// # Filling a schema
//
// Each property is filled from the user's last message, then from earlier messages and system
// prompts for identifiers and links:
//
//   - enums: the value the user wrote (case, separators and plurals ignored); else the value whose
//     description in the system prompt (the paragraph that names it, "project_execution" or
//     "project_execution_agent" alike) shares most words with the message; else, when required, a
//     neutral value such as "general" or the first one. Arrays of enums take every value named, or
//     every value scoring at least half the best.
//   - values quoted in a description ("Carrier: 'Aerolux' or 'Skyway'") act as an enum, with the
//     description's spelling.
//   - dates (format date or date-time, names with "date", "since", "until", descriptions saying
//     "ISO date"): the period the message names, as package period reads it (ISO and written
//     dates, months, quarters, seasons, today, yesterday, this/last week, month, quarter or year,
//     "last N days"); "start"/"end" properties take the two ends, an open end is today.
//   - URLs, e-mails, UUIDs and IDs (an "id" written after its name, like "order 2077"; packs add
//     their ID words and patterns), and an item a tool listed earlier, pointed at ("the second one",
//     "that one", a pack's "the oldest").
//   - numbers: years (four digits, "next year"), months, hours ("3pm"), "top 5" or "first 10" for
//     counts, a number written next to the property's words ("3 stops", "limit 20"), "under 500k" for
//     maxima and "at least 2" for minima, the text's only number for an amount, value or quantity;
//     minimum and maximum are respected.
//   - names (project_name, location, title, ...): a quoted string, else a run of capitalised words
//     ("Blue Harbor"), else the words after "in" for places.
//   - free text (query, question, content, ...): the message, without a leading "search the web
//     for"; reasons become "Requested by the user: ..."; summaries, titles and follow-up hints are
//     written from the conversation.
//   - booleans: true when the property's word appears in the message (false after "not").
//   - nested objects are filled the same way; a nullable property not found is null; a required
//     one takes its default when the schema gives one.
//
// With a Schema (structured output) every required property is filled and the answer always
// validates: a property the words do not give is read by key from the JSON of the tool results
// since the user's message (read first after tool results), pasted JSON and picture labels,
// converted to the property's type; what nothing gives takes a plausible default (neutral enum
// value, today, the minimum, minItems items). Tool arguments instead ask for what is missing.
//
// Amounts are read in both separator conventions (180.000€, 180 000 €, $1,250,000, 1.250,50,
// 180k€, 1.2M, 2,5 milhões); days and months named in English and Portuguese ("15 de janeiro",
// "January 15, 2024", "em março", "semana passada"); and names with typos match enum values and
// names the conversation holds within an edit distance (1 for 4-6 letters, 2 to 12, 3 beyond;
// codes with digits match exactly).
//
// # Domain packs
//
// The model knows only what is language-general. An application teaches it its domain with a
// [Pack]: synonyms per language, words that mark a language, intents (example phrasings mapped to
// a tool, with default arguments), ID words and fields, entity patterns that fill arguments, the
// words that name arguments' values (read beside the model with [NewValueReader]), reference words (superlatives such as "the oldest" over the items a tool listed; ordinals and
// "that one" are built in) and the line that opens the answer from a tool's results. A pack is data:
// a Go value or an embedded JSON file read with [ParsePack].
//
//	m := offline.New(&offline.Options{Packs: []*offline.Pack{pack.Pack}})
//	m2, ok, err := offline.Extend(m, other) // ok is false for anything but *Model
//
// The server extends the offline model of each app's roles with server.App.Pack; [PacksOf] finds
// a model's packs through wrappers. The rules an answer came from are named by the Rule constants
// under the metadata key [MetaRule]; programs tell the offline model with model.IsOffline.
//
// # Images
//
// The model reads what a picture says about itself: the image part's Text and data URL
// parameters, PNG tEXt/zTXt/iTXt chunks, JPEG EXIF ImageDescription/UserComment and XMP
// dc:description, or a sidecar (photo.jpg.json, photo.jpg.txt, photo.json, photo.txt) in
// Options.ImageDirs. The labels join the user's words and the data for structured output. See
// [DescribeImage] and docs/models.md.
//
// # Languages
//
// Trigger words and synonyms cover English, Portuguese, Spanish, French and German. The fixed
// phrases (the call announcement, "Here is what I found", the question for a missing argument, error
// notes, the fallback reply) are written in the language of the user's last message, detected by
// counting each language's common words; English when no other language's words outnumber it.
//
// Answers depend only on the request and Options.Now, so tests can rely on them.
package offline
