package backup

import (
	"testing"

	"github.com/tierbench/tierbench/internal/pagecachetest"
)

// A file just written and read is in the page cache; dropCache evicts it,
// and leaves it when the options keep the cache.
func TestDropCache(t *testing.T) {
	dir := pagecachetest.TempDir(t)
	path, pages := pagecachetest.CachedFile(t, dir, "sub/base/16384")
	if (Options{KeepCache: true}).dropCache(dir) {
		t.Error("KeepCache: dropCache says it dropped")
	}
	if n := pagecachetest.Resident(t, path); n < pages/2 {
		t.Errorf("KeepCache: %d of %d pages left in the cache", n, pages)
	}
	if !(Options{}).dropCache(dir) {
		t.Error("dropCache reports failure")
	}
	if n := pagecachetest.Resident(t, path); n > pages/10 {
		t.Errorf("after dropCache %d of %d pages still cached", n, pages)
	}
}
