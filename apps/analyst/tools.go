package analyst

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/trellis-go/trellis/agent"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/tool"
)

// RAGArgs are rag_tool's arguments.
type RAGArgs struct {
	Query          string         `json:"query" jsonschema:"what to look for in the company knowledge base"`
	TopK           int            `json:"top_k,omitempty" jsonschema:"how many passages (default 5, at most 50)"`
	FilterMetadata map[string]any `json:"filter_metadata,omitempty" jsonschema:"metadata to match: document_type, project, date, source"`
}

// WebArgs are web_search_tool's arguments.
type WebArgs struct {
	Query      string `json:"query" jsonschema:"what to search the web for"`
	MaxResults int    `json:"max_results,omitempty" jsonschema:"how many results (default 5, at most 20)"`
}

// MemorySearchArgs are memory_search_tool's arguments.
type MemorySearchArgs struct {
	Namespace string `json:"namespace" enum:"user_profile,company_profile,user_preferences,episodic_memory" jsonschema:"the memory namespace"`
	Query     string `json:"query"`
}

// WriteMemoryArgs are write_memory_tool's arguments.
type WriteMemoryArgs struct {
	Namespace       string   `json:"namespace" enum:"user_profile,company_profile,user_preferences,episodic_memory" jsonschema:"the memory namespace"`
	ContextMessages []string `json:"context_messages" jsonschema:"what the user said that the update is based on"`
	UpdateReason    string   `json:"update_reason"`
}

// QuestionArgs is the Question signal tool's argument.
type QuestionArgs struct {
	Content string `json:"content" jsonschema:"the clarifying question for the user"`
}

// DoneArgs is the Done signal tool's argument.
type DoneArgs struct {
	Done bool `json:"done"`
}

// WebResult is one result of web_search_tool.
type WebResult struct {
	URL     string  `json:"url"`
	Title   string  `json:"title"`
	Content string  `json:"content"`
	Score   float64 `json:"score"`
}

// Tools returns the specification's tools: rag_tool, web_search_tool, memory_search_tool,
// write_memory_tool, Question and Done. They act for the run's user and tenant.
func (a *Analyst) Tools() (map[string]tool.Tool, error) {
	rag, err := tool.New("rag_tool", "Searches the company knowledge base (documents and saved reports) with hybrid search, re-ranked, one passage per document; returns content, metadata and similarity_score.",
		func(ctx context.Context, in RAGArgs) ([]Chunk, error) {
			_, tenant := who(ctx, State{})
			if err := a.kb.EnsureCorpus(ctx, tenant); err != nil {
				return nil, err
			}
			if in.TopK > 50 {
				return nil, fmt.Errorf("%w: top_k is %d; send at most 50", ErrBadArgs, in.TopK)
			}
			out, err := a.kb.Retrieve(ctx, tenant, in.Query, in.TopK, in.FilterMetadata)
			if err != nil {
				return nil, err
			}
			if out == nil {
				out = []Chunk{}
			}
			return out, nil
		})
	if err != nil {
		return nil, err
	}
	web, err := tool.New("web_search_tool", "Searches the web (Tavily); returns url, title, content and score for each result.",
		func(ctx context.Context, in WebArgs) ([]WebResult, error) {
			// The question is rewritten into a search query: its content words, and the year
			// of its time frame.
			query := in.Query
			if q := rewrite(in.Query, a.now()).text(); q != "" {
				query = q
			}
			res, err := a.web.Search(ctx, query, in.MaxResults)
			if err != nil {
				return nil, err
			}
			out := []WebResult{}
			for _, r := range res {
				if r.PublishedDate != "" {
					a.dates.Store(r.URL, r.PublishedDate)
				}
				out = append(out, WebResult{URL: r.URL, Title: r.Title, Content: r.Content, Score: r.Score})
			}
			return out, nil
		})
	if err != nil {
		return nil, err
	}
	msearch, err := tool.New("memory_search_tool", "Searches one of the user's memory namespaces; returns the matching memory as text.",
		func(ctx context.Context, in MemorySearchArgs) (string, error) {
			if _, ok := memoryKeys[in.Namespace]; !ok {
				return "", fmt.Errorf("namespace %q is not one of %s", in.Namespace, strings.Join(Namespaces, ", "))
			}
			user := runUser(ctx)
			doc, err := a.mem.Load(ctx, user, in.Namespace)
			if err != nil {
				return "", err
			}
			terms := contentWords(in.Query)
			var hits []string
			for _, f := range doc.Facts {
				if len(terms) == 0 || share(terms, f.Text) > 0 {
					hits = append(hits, "- "+f.Text)
				}
			}
			if len(hits) == 0 {
				return "Nothing in " + in.Namespace + " matches.", nil
			}
			return strings.Join(hits, "\n"), nil
		})
	if err != nil {
		return nil, err
	}
	wmem, err := tool.New("write_memory_tool", "Updates one memory namespace with targeted additions and corrections drawn from the given messages; never removes anything.",
		func(ctx context.Context, in WriteMemoryArgs) (string, error) {
			if _, ok := memoryKeys[in.Namespace]; !ok {
				return "", fmt.Errorf("namespace %q is not one of %s", in.Namespace, strings.Join(Namespaces, ", "))
			}
			if len(in.ContextMessages) == 0 {
				return "", fmt.Errorf("context_messages is empty; send what the user said")
			}
			var msgs []message.Message
			for _, m := range in.ContextMessages {
				msgs = append(msgs, message.User(m))
			}
			user := runUser(ctx)
			before, err := a.mem.Load(ctx, user, in.Namespace)
			if err != nil {
				return "", err
			}
			var doc memoryDoc
			if in.Namespace == NSEpisodic {
				// Each message is one dated note.
				for _, m := range in.ContextMessages {
					if m = strings.TrimSpace(m); m != "" && err == nil {
						err = a.mem.Note(ctx, user, in.UpdateReason, m)
					}
				}
				doc, _ = a.mem.Load(ctx, user, in.Namespace)
			} else {
				doc, err = a.mem.Update(ctx, user, in.Namespace, in.UpdateReason, msgs)
			}
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("%s: %d facts (was %d).", in.Namespace, len(doc.Facts), len(before.Facts)), nil
		})
	if err != nil {
		return nil, err
	}
	question, err := tool.New("Question", "Asks the user a clarifying question through the inbox and returns the answer.",
		func(ctx context.Context, in QuestionArgs) (string, error) {
			in.Content = questionText(in.Content)
			if in.Content == "" {
				return "", fmt.Errorf("content is empty; send the question")
			}
			resp, err := agent.AskHuman(ctx, agent.HumanInterrupt{ActionRequest: agent.ActionRequest{Action: "Question", Args: map[string]any{"content": in.Content}},
				Config: agent.InboxConfig{AllowRespond: true, AllowIgnore: true}, Description: in.Content})
			if err != nil {
				return "", err
			}
			if resp.Type == "ignore" {
				return noAnswer, nil
			}
			return responseText(resp), nil
		})
	if err != nil {
		return nil, err
	}
	done, err := tool.New("Done", "Signals that the workflow is complete.", func(ctx context.Context, in DoneArgs) (string, error) {
		if in.Done {
			return "done", nil
		}
		return "not done", nil
	})
	if err != nil {
		return nil, err
	}
	return map[string]tool.Tool{"rag_tool": rag, "web_search_tool": web, "memory_search_tool": msearch, "write_memory_tool": wmem, "Question": question, "Done": done}, nil
}

// noAnswer is Question's result when the user ignores the question.
const noAnswer = "The user did not answer."

// askUser are the pack's words that start a brief to ask the user a question, longest first.
var askUser = func() []string {
	ps := slices.Clone(words.AskUser)
	slices.SortStableFunc(ps, func(a, b string) int { return len(b) - len(a) })
	return ps
}()

// questionText is the question itself, without a leading instruction to ask it ("Ask the user
// the question "..."", as the offline model copies a supervisor's brief).
func questionText(s string) string {
	s = strings.TrimSpace(s)
	low := strings.ToLower(s)
	for _, p := range askUser {
		if strings.HasPrefix(low, p) {
			s = strings.TrimSpace(strings.TrimLeft(s[len(p):], ": "))
			break
		}
	}
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = strings.TrimSpace(s[1 : len(s)-1])
	}
	return s
}

// runUser is the run's user as who sees it, for tools (which do not see the state).
func runUser(ctx context.Context) string {
	if u, _ := ctx.Value(userKey{}).(string); u != "" {
		return u
	}
	info, _ := graph.InfoFrom(ctx)
	u, _ := info.Config["user_id"].(string)
	if u == "" {
		u = "anonymous"
	}
	return u
}
