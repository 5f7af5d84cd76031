package tier_test

import (
	"testing"

	"github.com/tierbench/tierbench/internal/tier"
)

// Root's PATH after a plain su, like an ordinary user's, has no sbin
// directory, where Debian keeps losetup and mkfs.ext4: a tier is made all
// the same.
func TestImageWithoutSbinOnPath(t *testing.T) {
	requireRoot(t)
	ctx := testContext(t)
	dir := t.TempDir()
	removeAtEnd(t, dir, "nosbin")
	t.Setenv("PATH", "/usr/local/bin:/usr/bin:/bin")
	im, err := tier.Create(ctx, dir, "nosbin", 32<<20)
	if err != nil {
		t.Fatal(err)
	}
	if !im.Mounted {
		t.Errorf("Create = %+v; want it mounted", *im)
	}
	if err := im.Remove(ctx); err != nil {
		t.Fatal(err)
	}
}
