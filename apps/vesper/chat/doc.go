// Package chat is Vesper's WebSocket transport and chat records.
//
// [Handler] serves /ws/v1/chat?token=...&session_id=... on the app's
// appstream kit: before the upgrade the token is authenticated (401), the
// Origin checked (403), and the tenant's request rate and open streams
// applied (429); the connection is pinged and every write has a deadline.
// Each
// {"type":"chat.message","content":"..."} frame is answered with
// chat.thinking, the answer's chat.token frames as the synthesizer streams
// it, and chat.complete (the answer, intent, agents used, Power BI deep
// links, charts, latency); bad frames and failed turns get an "error" frame
// and the connection stays open.
//
// [Records] keeps chat_sessions (title from the first message, written by
// conversation.Title), chat_messages (intent, agents used, tool calls, deep links,
// token count, latency) and chat_session_summaries: once thirty messages
// have accumulated past the last summary they are folded into a new one
// (conversation.Summarize), and later turns start from that summary plus the
// messages after it.
package chat
