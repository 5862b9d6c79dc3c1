// Package pack is the analyst's domain pack for the offline model: the words its users write for
// the company's documents, which its knowledge-base tool (rag_tool) searches. The server gives it
// to the offline model of every role the analyst uses (server.App.Pack).
package pack

import (
	_ "embed"

	"github.com/trellis-go/trellis/model/offline"
)

//go:embed pack.json
var data []byte

// Pack is the analyst's pack, read from pack.json.
var Pack = offline.MustParsePack(data)
