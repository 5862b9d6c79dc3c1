// Package memory keeps what an agent learns about a user or a task in a [store.Store], in three
// shapes that applications share:
//
//   - Facts: one document of facts per namespace and key (a user profile, a project brief),
//     updated in place by [UpdateFacts]. A model proposes operations from a fixed schema, "add"
//     and "correct", and the code applies them: a correction replaces a fact's text and keeps
//     the old text in the fact's history; there is no operation that removes a fact, and
//     [Apply] refuses any operation that would (an unknown kind, an empty correction). With no
//     model, or with the offline model, the operations are derived deterministically from the
//     user's statements (see [ExtractOps]). Either way no fact is ever lost. [SetPreference]
//     keeps typed preferences ("[LOCATION] city: Denver") in the same kind of document.
//   - Episodes: what happened in a thread or session, saved by [SaveEpisode] and found again by
//     similarity with [SearchEpisodes] (the store's vector search when it has an embedder, full
//     text otherwise).
//   - Scored history: summaries of past work with a 1-5 usefulness score; [SaveSummary] keeps
//     one only when its score reaches the threshold, and [SearchSummaries] finds them by
//     similarity. [ScoreSummary] asks a model for the score (deterministically offline).
//
// Namespaces are given by the caller, for example {"rehab", "users", userID}. Each helper writes
// under a fixed child label ("facts", "episodes", "history") of that namespace and reads only
// items whose namespace is exactly that, so nothing leaks between users, sessions or apps, even
// when one namespace is a prefix of another.
//
// A typical agent reads memory in its per-call context hook (react.Options.Context) and
// writes it after the run:
//
//	ctxHook := func(ctx context.Context, in react.PromptInput) ([]message.Message, error) {
//		doc, err := memory.LoadFacts(ctx, st, ns, "profile")
//		if err != nil {
//			return nil, err
//		}
//		return []message.Message{message.System("Known about the user:\n" + doc.Text())}, nil
//	}
package memory
