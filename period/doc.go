// Package period reads the period a piece of text names, in English or Brazilian Portuguese:
// "2025-01-02 to 2025-01-09", "January 5, 2026", "15 de janeiro de 2024", "in March" (the latest
// March that has begun), "Q3 2025", "the second quarter", "summer 2025", "o verão", "the last 30
// days", "últimos 3 meses", "this week", "last month", "mês passado", "year to date", "today",
// "ontem". The offline model fills date arguments with it and applications read their users'
// questions with it, so that one reader, not one per caller, knows how people write dates.
//
// Read gives a [Period]: a start, an end (zero when the text gives only a start: "since March 1")
// and, when the period is whole months of one year, the months. Every day is a calendar day in
// UTC; the caller says what today is, so tests and demo data sets with their own date read
// relative periods against their own clock.
//
//	p, ok := period.Read("sales in March", today)        // March, this year or last
//	p, ok = period.Options{RollingWeeks: true}.Read(text, today) // "last week": the 7 days to today
//
// The words (month and season names, "last", "passado", "year to date", ...) are data, in the
// package's embedded words.json, one entry per language; every language's words are read in
// every text. Names that are also common words are months only beside a day, a year or a cue
// word ("may" in "in May", "May 5", "May 2025"; "mar" likewise), and "fall" is autumn only with a
// year or after "this", "last", "in", "during" or "over". Seasons follow the language's
// hemisphere: "summer" is June to August, "verão" December to February.
//
// A month or day written without a year is the latest one not after today ("in December", read
// in March 2025, is December 2024); a quarter or a season without a year is the latest that has
// begun. Two dates make a range, in the order written; a range whose second month has no year
// and falls before the first runs into the next year ("from November to February").
//
// One date after "since", "after" or "from" ("desde", "a partir de") opens a period to today
// (End zero); after "until", "before", "through" or "to" ("até") it closes the thirty days up to
// it. Weeks are calendar weeks from Monday unless [Options].RollingWeeks makes "last week" the
// seven days up to today. "The last 30 days", "past 2 weeks", "últimos 3 meses" end today.
//
// Text that names no period gives ok false; Read never fails otherwise, whatever the input
// (empty text, invalid dates such as 2025-02-30, numbers out of range are not dates).
package period
