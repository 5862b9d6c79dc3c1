package tool_test

import (
	"encoding/json"

	"github.com/trellis-go/trellis/model"
)

func specOf(name, params string) model.ToolSpec {
	return model.ToolSpec{Name: name, Parameters: json.RawMessage(params)}
}
