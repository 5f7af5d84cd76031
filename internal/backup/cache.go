package backup

import "github.com/tierbench/tierbench/internal/server"

// dropCache drops what the page cache holds of the files under dir
// (server.DropCache; when o keeps the cache, or dir is "", it does nothing)
// and reports whether it did.
func (o Options) dropCache(dir string) bool {
	if o.KeepCache || dir == "" {
		return false
	}
	return server.DropCache(dir)
}
