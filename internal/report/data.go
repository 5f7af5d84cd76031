package report

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// writeData fills the data directory: a CSV per table, a CSV per stored
// series of each run, an SVG per figure (the Markdown shows them). Files
// of an earlier report there are replaced; the directory holds only what
// this report wrote.
func writeData(dir string, doc *Document, runs []*runData, svgs map[string][]byte) (int, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, fmt.Errorf("report: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, dataDirMarker), []byte("written by tierbench report; rewritten by the next one\n"), 0o644); err != nil {
		return 0, fmt.Errorf("report: %w", err)
	}
	// What an earlier report left: its own kinds of files only.
	old, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("report: %w", err)
	}
	for _, e := range old {
		if ext := filepath.Ext(e.Name()); e.Type().IsRegular() && (ext == ".csv" || ext == ".svg") {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return 0, fmt.Errorf("report: %w", err)
			}
		}
	}
	n := 0
	write := func(name string, data []byte) error {
		n++
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return fmt.Errorf("report: %w", err)
		}
		return nil
	}
	var werr error
	for _, s := range doc.Sections {
		walk(s.Blocks, func(b Block) {
			if werr != nil {
				return
			}
			switch {
			case b.Table != nil:
				werr = write("table-"+b.Table.ID+".csv", tableCSV(b.Table))
			case b.Figure != nil:
				werr = write("figure-"+b.Figure.ID+".svg", svgs[b.Figure.ID])
			}
		})
	}
	if werr != nil {
		return n, werr
	}
	for _, rd := range runs {
		for _, name := range rd.seriesNames {
			if err := write(seriesFile(rd.ID, name), seriesCSV(rd, name)); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// seriesFile names a series' CSV file.
func seriesFile(runID, series string) string {
	return "series-" + runID + "-" + strings.NewReplacer("/", "_", " ", "_").Replace(series) + ".csv"
}

func tableCSV(t *Table) []byte {
	var b strings.Builder
	w := csv.NewWriter(&b)
	w.Write(t.Header)
	for _, r := range t.Rows {
		w.Write(r)
	}
	w.Flush()
	return []byte(b.String())
}

// seriesCSV is one series of a run: the step it belongs to, the time, the
// seconds since the run started and the value (empty when missing).
func seriesCSV(rd *runData, name string) []byte {
	var b strings.Builder
	w := csv.NewWriter(&b)
	w.Write([]string{"run", "series", "step", "step_name", "time_utc", "seconds", "value"})
	names := map[int]string{}
	for _, st := range rd.Steps {
		names[st.Index] = st.Name
	}
	t0 := rd.origin()
	for _, p := range rd.series[name] {
		v := ""
		if !math.IsNaN(p.Value) {
			v = strconv.FormatFloat(p.Value, 'g', -1, 64)
		}
		w.Write([]string{rd.ID, name, strconv.Itoa(p.Step), names[p.Step], p.T.UTC().Format(time.RFC3339Nano),
			strconv.FormatFloat(p.T.Sub(t0).Seconds(), 'f', 3, 64), v})
	}
	w.Flush()
	return []byte(b.String())
}
