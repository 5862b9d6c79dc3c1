package rehab

import (
	"net/http"
)

func (a *API) report(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusNotImplemented, APIError{Error: "rehab: the PDF report is not built yet"})
}
