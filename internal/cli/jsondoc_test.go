package cli_test

import (
	"encoding/json"
	"testing"
)

// object decodes a JSON object, failing the test when doc is not one.
func object(t *testing.T, where, doc string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatalf("%s is not one JSON object: %v\n%s", where, err, doc)
	}
	return m
}

// hasKeys checks that the JSON object v (a decoded map) has every key,
// and returns it.
func hasKeys(t *testing.T, where string, v any, keys ...string) map[string]any {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Errorf("%s: %v is not a JSON object", where, v)
		return nil
	}
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			t.Errorf("%s has no key %q: %v", where, k, m)
		}
	}
	return m
}

// first is the first element of the JSON array v (nil when there is none).
func first(t *testing.T, where string, v any) any {
	t.Helper()
	a, ok := v.([]any)
	if !ok || len(a) == 0 {
		t.Errorf("%s: %v is not a non-empty JSON array", where, v)
		return nil
	}
	return a[0]
}
