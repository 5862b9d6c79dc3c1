package offline

import (
	"strings"

	"github.com/trellis-go/trellis/message"
)

// MetaOffline is the message metadata key set to true on every message the offline model
// writes (with "provider": "offline" and "offline_rule"). Programs tell an offline answer by
// it, never by the text; [Marker] is only the label a person reads.
const MetaOffline = "offline"

// IsOffline reports whether message metadata says the offline model wrote the message.
func IsOffline(md map[string]any) bool {
	v, _ := md[MetaOffline].(bool)
	return v
}

// Unlabelled returns m's text without the visible [Marker] when m's metadata says the offline
// model wrote it, and m's text unchanged otherwise.
func Unlabelled(m message.Message) string {
	if !IsOffline(m.Metadata) {
		return m.Text()
	}
	return StripMarker(m.Text())
}

// StripMarker removes the visible [Marker] from text written by the offline model, for a
// program that already knows (from metadata) who wrote it and reuses the text.
func StripMarker(text string) string {
	return strings.TrimSpace(strings.ReplaceAll(text, Marker, ""))
}
