package serve

import (
	"crypto/subtle"
	"encoding/json"
	"net/http"
)

func constantTimeEqual(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// apiError is the body of every refusal: what was wrong and, for bad
// input, where: the request's key (field) or a scenario's line and column.
type apiError struct {
	Error    string     `json:"error"`
	Field    string     `json:"field,omitempty"`
	Line     int        `json:"line,omitempty"`
	Col      int        `json:"col,omitempty"`
	Problems []apiError `json:"problems,omitempty"` // every problem, when there are several
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, code int, e *apiError) { writeJSON(w, code, e) }
