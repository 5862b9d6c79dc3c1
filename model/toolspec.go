package model

import "encoding/json"

// ToolSpec describes a tool to a model: its name, what it does, and the JSON Schema (an object
// schema) of its arguments. Providers translate it to their wire format; the offline model reads
// the schema to choose a tool and fill its arguments.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}
