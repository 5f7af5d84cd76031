package cli

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/experiment"
	"github.com/tierbench/tierbench/internal/fio"
	"github.com/tierbench/tierbench/internal/options"
	"github.com/tierbench/tierbench/internal/stored"
	"github.com/tierbench/tierbench/internal/units"
)

func newDiskCommand(g *Globals) *cobra.Command {
	cmd := newGroupCommand("disk", "Storage profiles through fio: IOPS, MB/s and merged latency percentiles")
	cmd.AddCommand(newDiskRunCommand(g), newDiskProfilesCommand(g))
	return cmd
}

// DiskRunOptions are the flags of `disk run`: a run's options and the live
// metrics endpoint's.
type DiskRunOptions struct {
	options.DiskRun
	metricsOptions
}

// AddFlags registers the options' flags.
func (o *DiskRunOptions) AddFlags(fs *pflag.FlagSet) {
	o.DiskRun.AddFlags(fs)
	o.metricsOptions.addFlags(fs)
}

func newDiskRunCommand(g *Globals) *cobra.Command {
	var opts DiskRunOptions
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run a storage profile or an ad-hoc sweep with fio and store its points",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := runDiskRun(cmd.Context(), g, opts, cmd.Flags())
			return err
		},
	}
	opts.AddFlags(cmd.Flags())
	return cmd
}

func runDiskRun(ctx context.Context, g *Globals, opts DiskRunOptions, fs *pflag.FlagSet) (*experiment.DiskResult, error) {
	cfg, err := opts.Config(fs)
	if err = thresholds(g, err); err != nil {
		return nil, err
	}
	v := newView(g)
	obs, done, err := opts.metricsOptions.begin(ctx, g, &cfg.Record, diskView{v})
	if err != nil {
		return nil, err
	}
	defer done()
	out, err := experiment.RunDisk(ctx, *cfg, obs)
	return out, printRun(v, out, err, func() {
		for _, k := range out.KneeTexts() {
			fmt.Fprintln(g.Stdout, k)
		}
		if out.Repeat > 1 && len(out.Points) > 0 {
			printDiskRepeats(g.Stdout, out)
			runs := 0
			for _, p := range out.Points {
				runs += len(p.Repetitions)
			}
			fmt.Fprintf(g.Stdout, "run %s %s: %s of %s (--repeat %d); stored in %s\n", out.RunID, out.Status, units.Plural(runs, "run", "runs"),
				units.Plural(len(out.Points), "point", "points"), out.Repeat, v.store)
			return
		}
		fmt.Fprintf(g.Stdout, "run %s %s: %s; stored in %s\n", out.RunID, out.Status, units.Plural(len(out.Points), "point", "points"), v.store)
	})
}

// diskView is the view of a disk run: a repeated point's name comes once
// per repetition in the table, so each row says which repetition it is.
type diskView struct{ *view }

func (v diskView) Result(r experiment.Result) {
	if p := r.Point; p != nil && p.Repetition > 0 {
		q := *p
		q.Name = fmt.Sprintf("%s #%d", p.Name, p.Repetition)
		r.Point = &q
	}
	v.view.Result(r)
}

// printDiskRepeats prints each point over its repetitions: IOPS and MB/s
// as the mean ± half the 95% interval, and the p99 of all the
// repetitions' I/Os (their merged histograms) in each direction.
func printDiskRepeats(w io.Writer, out *experiment.DiskResult) {
	fmt.Fprintf(w, "over %d repetitions (mean ± half the 95%% confidence interval):\n", out.Repeat)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "point\tread IOPS\tread MB/s\twrite IOPS\twrite MB/s\tp99 ms pooled r/w\t")
	for _, p := range out.Points {
		cell := func(name, format string) string {
			s, ok := p.Stats[name]
			if !ok || s.N == 0 {
				return "-"
			}
			return fmt.Sprintf("%s (n=%d)", meanCI(s, format), s.N)
		}
		p99 := func(d *stored.PooledDir) string {
			if d == nil {
				return "-"
			}
			return fmt.Sprintf("%.3f", d.P99Ms)
		}
		pooled := "-"
		if p.Pooled != nil {
			pooled = p99(p.Pooled.Read) + "/" + p99(p.Pooled.Write)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", p.Name, cell("read.iops", "%.0f"), cell("read.mbps", "%.1f"),
			cell("write.iops", "%.0f"), cell("write.mbps", "%.1f"), pooled)
	}
	tw.Flush()
}

// diskProfilesOutput is the JSON of `disk profiles`.
type diskProfilesOutput struct {
	Profiles []diskProfileOutput `json:"profiles"`
}

type diskProfileOutput struct {
	Name     string     `json:"name"`
	Title    string     `json:"title"`
	Duration string     `json:"duration"`
	Ramp     string     `json:"ramp"`
	Size     string     `json:"size"`
	Points   []fio.Spec `json:"points"`
}

func newDiskProfilesCommand(g *Globals) *cobra.Command {
	return &cobra.Command{
		Use:   "profiles",
		Short: "List the bundled storage profiles and their points",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			out := diskProfilesOutput{}
			for _, p := range fio.Profiles {
				out.Profiles = append(out.Profiles, diskProfileOutput{Name: p.Name, Title: p.Title,
					Duration: p.Duration.String(), Ramp: p.Ramp.String(), Size: units.FormatSize(p.Size), Points: p.Points})
			}
			if g.JSON {
				return g.printJSON(out)
			}
			for _, p := range fio.Profiles {
				total := time.Duration(len(p.Points)) * (p.Duration + p.Ramp)
				fmt.Fprintf(g.Stdout, "%s: %s\n  %s, %s measured + %s ramp each (about %s), %s test file:\n",
					p.Name, p.Title, units.Plural(len(p.Points), "point", "points"), p.Duration, p.Ramp, total, units.FormatSize(p.Size))
				for _, s := range p.Points {
					fmt.Fprintf(g.Stdout, "    %s\n", s.Name)
				}
			}
			return nil
		},
	}
}
