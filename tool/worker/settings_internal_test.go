package worker

import (
	"maps"
	"testing"
)

// A worker's settings are its environment without the pool's own variables; a value may hold "=".
func TestSettingsOf(t *testing.T) {
	got := settingsOf([]string{"REALTY_API_KEY=k=1", "REALTY_API_BASE=http://api", EnvName + "=property",
		EnvAddr + "=127.0.0.1:0", EnvFD + "=3", "EMPTY=", "not-a-pair"})
	want := Settings{"REALTY_API_KEY": "k=1", "REALTY_API_BASE": "http://api", "EMPTY": ""}
	if !maps.Equal(got, want) {
		t.Errorf("settingsOf = %v, want %v", got, want)
	}
	if got.Get("MISSING") != "" || Settings(nil).Get("X") != "" {
		t.Error("an unset setting is not empty")
	}
}
