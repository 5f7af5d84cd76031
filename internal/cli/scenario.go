package cli

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tierbench/tierbench/internal/options"
	"github.com/tierbench/tierbench/internal/scenario"
	"github.com/tierbench/tierbench/internal/units"
)

func newScenarioCommand(g *Globals) *cobra.Command {
	cmd := newGroupCommand("scenario", "List, validate and run scenarios: targets, servers and steps in one YAML file")
	cmd.AddCommand(newScenarioListCommand(g), newScenarioValidateCommand(g), newScenarioRunCommand(g))
	return cmd
}

// scenarioOptions are the flags that pick and adjust a scenario.
type scenarioOptions struct {
	Scenario string   // a file, or a bundled scenario's name
	Scale    string   // "" = the file's defaults
	Sets     []string // key=value, each overriding a variable
}

func (o *scenarioOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Scale, "scale", "", "scale to apply, e.g. laptop or paper (default: the file's default variables; the bundled scenarios' are laptop)")
	// StringArray, not StringSlice: values such as vus=1,2,4 hold commas.
	fs.StringArrayVar(&o.Sets, "set", nil, "override a variable, key=value (repeatable), e.g. --set vus=1,2,4 --set data=/mnt/fast")
}

// sets reads the --set flags into a map; a later --set of a key wins.
func (o *scenarioOptions) sets() (map[string]string, error) {
	out := make(map[string]string, len(o.Sets))
	for _, kv := range o.Sets {
		k, v, ok := strings.Cut(kv, "=")
		if k = strings.TrimSpace(k); !ok || k == "" {
			return nil, usagef("--set %q: write key=value, e.g. --set warehouses=8", kv)
		}
		out[k] = v
	}
	return out, nil
}

// load reads the scenario the options name.
func (o *scenarioOptions) load() (*scenario.Scenario, error) {
	sets, err := o.sets()
	if err != nil {
		return nil, err
	}
	return scenario.Load(o.Scenario, o.Scale, sets)
}

// scenarioListOutput is the JSON of `scenario list`.
type scenarioListOutput struct {
	Scenarios []scenario.Info `json:"scenarios"`
}

func newScenarioListCommand(g *Globals) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the bundled scenarios",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return runScenarioList(g)
		},
	}
}

func runScenarioList(g *Globals) error {
	out := scenarioListOutput{Scenarios: scenario.Bundled()}
	if g.JSON {
		return g.printJSON(out)
	}
	tw := tabwriter.NewWriter(g.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tTITLE")
	for _, s := range out.Scenarios {
		fmt.Fprintf(tw, "%s\t%s\n", s.Name, s.Title)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(g.Stdout, "\nrun one with: tierbench scenario run NAME [--scale laptop|paper]; docs/scenarios.md describes them")
	return nil
}

// ScenarioValidateOptions are the flags and argument of `scenario validate`.
type ScenarioValidateOptions struct {
	scenarioOptions
}

// AddFlags registers the options' flags.
func (o *ScenarioValidateOptions) AddFlags(fs *pflag.FlagSet) { o.addFlags(fs) }

func newScenarioValidateCommand(g *Globals) *cobra.Command {
	var opts ScenarioValidateOptions
	cmd := &cobra.Command{
		Use:   "validate FILE|NAME",
		Short: "Check a scenario file (or a bundled scenario) and list every problem with its line",
		Args:  needArgs(1, "one scenario: a YAML file or a bundled scenario's name (tierbench scenario list)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Scenario = args[0]
			return runScenarioValidate(cmd.Context(), g, opts)
		},
	}
	opts.AddFlags(cmd.Flags())
	return cmd
}

// scenarioValidateOutput is the JSON of `scenario validate`.
type scenarioValidateOutput struct {
	OK     bool             `json:"ok"`
	Name   string           `json:"name,omitempty"`
	Scale  string           `json:"scale,omitempty"`
	Steps  int              `json:"steps,omitempty"`
	Vars   []scenarioVar    `json:"vars,omitempty"`
	Errors []scenario.Error `json:"errors"`
}

type scenarioVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

func runScenarioValidate(ctx context.Context, g *Globals, opts ScenarioValidateOptions) error {
	sc, err := opts.load()
	var problems scenario.Errors
	if err != nil && !errors.As(err, &problems) {
		return err // a bad --set
	}
	if len(problems) == 0 {
		// The hosts' addresses answer: a dead one is a problem of the file.
		errors.As(scenario.CheckHosts(ctx, sc), &problems)
	}
	if len(problems) > 0 {
		return reportScenarioErrors(g, problems)
	}
	out := scenarioValidateOutput{OK: true, Name: sc.Name, Scale: sc.Scale, Steps: len(sc.Steps), Errors: []scenario.Error{}}
	names := make([]string, 0, len(sc.Vars))
	for k := range sc.Vars {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		out.Vars = append(out.Vars, scenarioVar{Name: k, Value: sc.Vars[k]})
	}
	if g.JSON {
		return g.printJSON(out)
	}
	fmt.Fprintf(g.Stdout, "ok: %s\n", units.Plural(len(sc.Steps), "step", "steps"))
	return nil
}

// reportScenarioErrors prints each problem as a line of its own on stderr —
// "tierbench: FILE:LINE:COL: message", so every line stands alone for an
// editor or grep — and, with --json, the list on stdout. It returns exit 2
// with nothing more to print.
func reportScenarioErrors(g *Globals, problems scenario.Errors) error {
	for _, e := range problems {
		fmt.Fprintf(g.Stderr, "tierbench: %s\n", oneLine(e.Error()))
	}
	if g.JSON {
		if err := g.printJSON(scenarioValidateOutput{OK: false, Errors: problems}); err != nil {
			return err
		}
	}
	return &ExitError{Code: ExitUsage}
}

// ScenarioRunOptions are the flags and argument of `scenario run`.
type ScenarioRunOptions struct {
	scenarioOptions
	Results string // the results store
	Data    string // sets ${data}, under which the bundled scenarios put their targets
	options.Noisy
	metricsOptions
}

// AddFlags registers the options' flags.
func (o *ScenarioRunOptions) AddFlags(fs *pflag.FlagSet) {
	o.scenarioOptions.addFlags(fs)
	fs.StringVar(&o.Results, "results", defaultResultsDir, "results store directory")
	fs.StringVar(&o.Data, "data", "", "directory under which the scenario's targets go: sets the variable data (default "+scenario.DefaultDataDir+")")
	o.Noisy.AddFlags(fs, "step, point or phase")
	o.metricsOptions.addFlags(fs)
}

// load reads the scenario, --data setting the variable data.
func (o *ScenarioRunOptions) load() (*scenario.Scenario, error) {
	sets, err := o.sets()
	if err != nil {
		return nil, err
	}
	if o.Data != "" {
		if _, given := sets["data"]; given {
			return nil, usagef("--data and --set data=… both set the data directory; give one")
		}
		sets["data"] = o.Data
	}
	return scenario.Load(o.Scenario, o.Scale, sets)
}

func newScenarioRunCommand(g *Globals) *cobra.Command {
	var opts ScenarioRunOptions
	cmd := &cobra.Command{
		Use:   "run FILE|NAME",
		Short: "Run a scenario: prepare its targets, start its servers, run its steps, write the report",
		Args:  needArgs(1, "one scenario: a YAML file or a bundled scenario's name (tierbench scenario list)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Scenario = args[0]
			return runScenario(cmd.Context(), g, opts)
		},
	}
	opts.AddFlags(cmd.Flags())
	return cmd
}
