// Package entity resolves the names users write to the values the data
// holds: Resolve applies the specification's alias map ("texas" is ERCOT,
// "red" is off_track, "icf" is Hitachi) and then fuzzy matching with the
// specification's cutoff of 0.7 (Ratio is difflib's SequenceMatcher ratio);
// ProjectResolver finds projects in a tenant's live per_project view,
// answers an ambiguous name with the list of matches and an unknown one
// with close suggestions, and caches resolved names for five minutes in
// Redis (RedisCache) or in process (MemoryCache).
package entity
