package cli

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/space"
	"github.com/tierbench/tierbench/internal/units"
)

// SpaceOptions are the flags of `space`.
type SpaceOptions struct {
	Target    string
	Block     string
	KeepBelow float64
	Workers   int
	Sample    string
	Results   string
	metricsOptions
}

// AddFlags registers the options' flags.
func (o *SpaceOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Target, "target", "", "what to scan, read-only: a directory (e.g. a server's data directory), a file, or a block device")
	fs.StringVar(&o.Block, "block", "4k", "the block size dedup and compression work on: a power of two from 512 to 1m")
	fs.Float64Var(&o.KeepBelow, "keep-below", 0.5, "a block is stored compressed only when it compresses to at most this share of the block "+
		"(0.5: vSAN keeps a 4 KiB block compressed only at 2 KiB or less), else whole; 1 keeps every block that shrinks at all")
	fs.IntVar(&o.Workers, "workers", 0, "goroutines hashing and compressing (default: one per core)")
	fs.StringVar(&o.Sample, "zstd-sample", "auto", "zstd compresses 1 in N unique blocks (chosen by their hash) and its ratio is estimated from them, "+
		"with a 95% interval: auto (every block up to 64 MiB, then up to 1 in 64), or N, a power of two; 1 is exact (and about 4x slower)")
	fs.StringVar(&o.Results, "results", defaultResultsDir, "results store directory")
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

// config checks the flags and turns them into a run's config.
func (o *SpaceOptions) config() (experiment.SpaceConfig, error) {
	var cfg experiment.SpaceConfig
	if strings.TrimSpace(o.Target) == "" {
		return cfg, usagef("no --target given; name a directory, a file or a block device to scan, e.g. --target /var/lib/postgresql/15/main")
	}
	block, err := units.ParseSize(o.Block)
	if err != nil {
		return cfg, usagef("--block: %v", err)
	}
	if o.KeepBelow <= 0 { // space.Options reads 0 as "the default"; given here, it is a mistake
		return cfg, usagef("--keep-below %g is not above 0; give a share of the block such as 0.5, or leave it out", o.KeepBelow)
	}
	sample, err := space.ParseZstdSample(o.Sample)
	if err != nil {
		return cfg, usagef("--zstd-sample: %v", err)
	}
	if block <= 0 || block > math.MaxInt32 {
		return cfg, usagef("--block %s: give a power of two from 512 to 1m, e.g. 4k, 8k or 64k", o.Block)
	}
	if err := checkResultsDir(o.Results); err != nil {
		return cfg, err
	}
	cfg.Results, cfg.Target = o.Results, o.Target
	cfg.Options = space.Options{BlockSize: int(block), KeepBelow: o.KeepBelow, Workers: o.Workers, ZstdSample: sample}
	// The ranges and the target are space.Check's (bad input, before the
	// run is recorded): one rule for this command and a scenario's step.
	if err := space.Check(o.Target, &cfg.Options); err != nil {
		return cfg, &UsageError{Msg: err.Error()}
	}
	return cfg, nil
}

func runSpace(ctx context.Context, g *Globals, opts SpaceOptions) error {
	cfg, err := opts.config()
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
