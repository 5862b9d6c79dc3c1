// Package synth is the response synthesizer's deterministic half: it turns
// tool results into Markdown by the specification's rules before any model
// sees them, so every model, the offline one included, formats alike.
//
// The rules: lead with the answer in a sentence; tables for more than three
// rows (and for comparisons of two or three rows over three or more
// columns), lists otherwise; health colours as 🟢 Green, 🟡 Yellow, 🔴 Red,
// 🔵 Blue and ⬜ N/A; money in $K, $M and $B; prices as $/MWh with two
// decimals; dates as "March 2026", "Jun 2025" in tables and "Feb 26" for
// days of the current year; a "Related Reports" section when there are deep
// links; an empty result says what was searched and what to try; tables are
// shortened until the answer is under 600 words. Series (hourly prices,
// hub-zone spreads, usage trends) also carry a Chart a UI can draw.
//
// The words are data, in texts.json ([ParseTexts], read strictly by pack.Read): the answers'
// sentence templates (with a "_one" and an "_other" form where a count decides the wording),
// the tables' column headers, the charts' titles and labels, the status and health-colour
// words, what an empty result suggests, how a failed or refused call is explained, the hint per
// argument. Go fills their placeholders; the number, money and date formats stay in Go.
//
//	f := synth.New(nil)
//	block, err := f.Render(result)        // one *tools.XxxResult
//	block := f.Error("get_budget_overview", err) // a denial or failure, explained
//	answer := f.Compose(blocks, links)    // answer.Markdown, answer.Charts
package synth
