package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/options"
	"github.com/tierbench/tierbench/internal/units"
)

// SpaceOptions are the flags of `space`: a scan's options and the live
// metrics endpoint's.
type SpaceOptions struct {
	options.Space
	metricsOptions
}

// AddFlags registers the options' flags.
func (o *SpaceOptions) AddFlags(fs *pflag.FlagSet) {
	o.Space.AddFlags(fs)
	o.metricsOptions.addFlags(fs)
}

func newSpaceCommand(g *Globals) *cobra.Command {
	var opts SpaceOptions
	cmd := &cobra.Command{
		Use:   "space",
		Short: "Estimate what deduplication, compression and erasure coding would save on some data (a read-only scan)",
		Long: `Reads the target block by block, read-only, and estimates from its blocks what
deduplication (a 128-bit hash per block), compression (LZ4, as all-flash arrays
and vSAN use on 4 KiB blocks, and zstd) and protection policies (mirroring with 1,
2 and 3 failures to tolerate, RAID-5 3+1, RAID-6 4+2) would make of it: zero,
unique and duplicate blocks, the dedup, compression and savings ratios, and the
raw capacity each policy needs with and without the reductions. See docs/space.md
for every ratio's arithmetic. It is an estimate from the blocks, not a
measurement of a particular array. A mounted device is scanned too and flagged
"live: inconsistent snapshot". Ctrl-C keeps a partial result, marked partial.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runSpace(cmd.Context(), g, opts)
		},
	}
	opts.AddFlags(cmd.Flags())
	return cmd
}

func runSpace(ctx context.Context, g *Globals, opts SpaceOptions) error {
	cfg, err := opts.Config()
	if err != nil {
		return err
	}
	v := newView(g)
	obs, done, err := opts.metricsOptions.begin(ctx, g, nil, v)
	if err != nil {
		return err
	}
	defer done()
	out, err := experiment.RunSpace(ctx, cfg, obs)
	return printRun(v, out, err, func() { printSpace(g.Stdout, out, v.store) })
}

// scanProgress draws a scan's progress bar.
func (v *view) scanProgress(p experiment.SpaceProgress) {
	if v.scanStart.IsZero() {
		v.scanStart = time.Now()
	}
	el := time.Since(v.scanStart).Seconds()
	line := fmt.Sprintf("scanning: %s", units.FormatSize(p.Bytes))
	if p.Total > 0 {
		f := min(float64(p.Bytes)/float64(p.Total), 1)
		const width = 30
		bar := strings.Repeat("#", int(f*width)) + strings.Repeat(".", width-int(f*width))
		line = fmt.Sprintf("scanning [%s] %3.0f%% %s of %s", bar, 100*f, units.FormatSize(p.Bytes), units.FormatSize(p.Total))
		if f > 0 && f < 1 && el >= 1 {
			line += fmt.Sprintf(", ETA %s", time.Duration(el*(1-f)/f*float64(time.Second)).Round(time.Second))
		}
	}
	if el >= 1 { // the first call may come at the very end of a short scan
		line += fmt.Sprintf(", %.0f MB/s", float64(p.Bytes)/1e6/el)
	}
	every := time.Since(v.scanLine) >= 5*time.Second
	if every {
		v.scanLine = time.Now()
	}
	v.draw(line, every)
}

// printSpace prints a scan's result: the block counts, the ratios and the
// capacity table.
func printSpace(w io.Writer, out *experiment.SpaceResult, store string) {
	r := out.Result
	state := ""
	if r.Partial {
		state = " (partial: stopped early; the counts cover what was read)"
	}
	fmt.Fprintf(w, "space %s: %s of %s %s in %s blocks of %s%s\n", out.RunID, units.FormatSize(r.LogicalBytes), r.Kind, r.Target,
		units.Thousands(r.Blocks), units.FormatSize(int64(r.BlockBytes)), state)
	if out.LiveNote != "" {
		fmt.Fprintf(w, "  %s\n", out.LiveNote)
	}
	fmt.Fprintf(w, "  zero %s, unique %s, duplicate %s blocks\n", units.Thousands(r.ZeroBlocks), units.Thousands(r.UniqueBlocks),
		units.Thousands(r.DuplicateBlocks))
	fmt.Fprintf(w, "  dedup %.2fx; compression, a block kept compressed at %.0f%% of its size or less: lz4 %s, zstd %s; savings %.2fx: %s stored\n",
		r.DedupRatio, 100*r.KeepBelow, r.Compression["lz4"].Text(), r.Compression["zstd"].Text(), r.SavingsRatio, units.FormatSize(r.StoredBytes))
	if a := out.Actual; a != nil {
		fmt.Fprintf(w, "  %s with %s compression really stored %s of %s (%.2fx, %s)\n", a.FS, a.Compress, units.FormatSize(a.Disk),
			units.FormatSize(a.Uncompressed), a.Ratio, a.Tool)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "  policy\traw\traw, reduced\t")
	for _, c := range r.Capacity {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t\n", c.Policy, units.FormatSize(c.RawBytes), units.FormatSize(c.RawBytesReduced))
	}
	tw.Flush()
	fmt.Fprintf(w, "stored in %s\n", store)
}
