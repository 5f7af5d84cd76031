package cli

import (
	"strings"

	"github.com/tierbench/tierbench/internal/experiment"
)

// flagged turns the problems a config's Validate found into one usage
// error, naming each field by its flag: --FIELD with _ as -, unless names
// gives the field's own name there (e.g. "settings": "--set"). An error
// with no problems in it comes back as it is; nil stays nil.
func flagged(err error, names map[string]string) error {
	ps := experiment.Problems(err)
	if len(ps) == 0 {
		return err
	}
	name := func(field string) string {
		if n, ok := names[field]; ok {
			return n
		}
		return "--" + strings.ReplaceAll(field, "_", "-")
	}
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.Render(name)
	}
	return usagef("%s", strings.Join(parts, "; "))
}
