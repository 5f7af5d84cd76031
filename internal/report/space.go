package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/internal/report/chart"
	"github.com/tierbench/tierbench/internal/space"
	"github.com/tierbench/tierbench/internal/stored"
)

// spaceSection shows space scans: what deduplication, compression and
// erasure coding would save on each scanned server or target, the capacity
// each protection policy needs with and without the reductions, and, where
// an emulated tier compressed inline, what its file system really stored.
func spaceSection(runs []*runData) *Section {
	s := &Section{ID: "space", Title: "Space efficiency"}
	var group []*runData
	for _, rd := range runs {
		if rd.Space != nil {
			group = append(group, rd)
		}
	}
	if len(group) == 0 {
		return s
	}
	s.text("An estimate from the blocks, not a measurement of a particular array: each scan read the data block by block, " +
		"counted zero blocks, found duplicates by a 128-bit hash of each block, and compressed each unique block with LZ4 and zstd, " +
		"counting it compressed only when it shrank to the rule's share of the block. Arrays differ in their block and compression unit, " +
		"their metadata and their rules. docs/space.md defines every ratio.")
	names := make([]string, len(group))
	for i, rd := range group {
		names[i] = spaceName(rd, runs)
	}
	c := chart.Chart{Title: "Space savings per scan", XLabel: "scan", YLabel: "ratio (x less space)", Kind: chart.Bar, YFromZero: true, Categories: names}
	for si, m := range []struct {
		name string
		v    func(space.Result) float64
	}{
		{"dedup", func(r space.Result) float64 { return r.DedupRatio }},
		{"lz4", func(r space.Result) float64 { return r.Compression["lz4"].Ratio }},
		{"zstd", func(r space.Result) float64 { return r.Compression["zstd"].Ratio }},
		{"savings (zeros, dedup, lz4)", func(r space.Result) float64 {
			if unbounded(r) {
				return nan() // no bar: a 0 would read as no savings
			}
			return r.SavingsRatio
		}},
	} {
		sr := chart.Series{Name: m.name, Color: si}
		for i, rd := range group {
			sr.Points = append(sr.Points, chart.Point{X: float64(i), Y: m.v(rd.Space.Result)})
		}
		c.Series = append(c.Series, sr)
	}
	s.figure(&Figure{ID: "space-savings", Chart: c})

	t := &Table{ID: "space-scans", Caption: "Scans: blocks and ratios",
		Header:  []string{"scan", "logical", "block", "zero", "unique", "duplicate", "dedup", "lz4", "zstd", "savings", "stored", "note"},
		Numeric: []bool{false, true, true, true, true, true, true, true, true, true, true, false}}
	for i, rd := range group {
		r := rd.Space.Result
		var note []string
		if r.Partial {
			note = append(note, "partial (stopped early)")
		}
		if rd.Space.LiveNote != "" {
			note = append(note, rd.Space.LiveNote)
		}
		t.Rows = append(t.Rows, []string{names[i], sizeText(r.LogicalBytes), bytesText(int64(r.BlockBytes)), thousands(r.ZeroBlocks),
			thousands(r.UniqueBlocks), thousands(r.DuplicateBlocks), times(r.DedupRatio), times(r.Compression["lz4"].Ratio),
			ratioText(r.Compression["zstd"]), savingsText(r), sizeText(r.StoredBytes), strings.Join(note, "; ")})
	}
	s.table(t)
	if every := sampledEvery(group); every != "" {
		s.text("LZ4, dedup and the savings count every block. zstd, four times LZ4's cost per block, compressed a sample of the unique blocks " +
			"(1 in " + every + ", chosen by their hash, so a simple random sample): its ratio is estimated from the sample, " +
			"with the 95% confidence interval in brackets.")
	}

	// The capacity table: a row per scan, raw bytes per policy, plain and
	// after zero elimination, dedup and compression.
	var policies []string
	for _, cp := range group[0].Space.Capacity {
		policies = append(policies, cp.Policy)
	}
	ct := &Table{ID: "space-capacity", Caption: "Raw capacity each protection policy needs: as the data is / after zero elimination, dedup and lz4",
		Header: append([]string{"scan"}, policies...)}
	ct.Numeric = make([]bool, len(ct.Header))
	for i, rd := range group {
		row := []string{names[i]}
		for _, p := range policies {
			cell := "–"
			for _, cp := range rd.Space.Capacity {
				if cp.Policy == p {
					cell = sizeText(cp.RawBytes) + " / " + sizeText(cp.RawBytesReduced)
				}
			}
			row = append(row, cell)
		}
		ct.Rows = append(ct.Rows, row)
	}
	s.table(ct)

	at := &Table{ID: "space-actual", Caption: "Estimated against what the file system really stored (emulated tiers)",
		Header:  []string{"scan", "file system", "compression", "estimate lz4", "estimate zstd", "actual", "disk", "uncompressed", "read by"},
		Numeric: []bool{false, false, false, true, true, true, true, true, false}}
	for i, rd := range group {
		a := rd.Space.Actual
		if a == nil {
			continue
		}
		r := rd.Space.Result
		at.Rows = append(at.Rows, []string{names[i], a.FS, a.Compress, times(r.Compression["lz4"].Ratio), ratioText(r.Compression["zstd"]),
			times(a.Ratio), bytesText(a.Disk), bytesText(a.Uncompressed), a.Tool})
	}
	if len(at.Rows) > 0 {
		s.table(at)
		s.text("The file system's own figures are for its whole files as it stored them (btrfs compresses extents of up to 128 KiB, " +
			"and keeps an extent compressed only when that saves space), so they differ from the block estimate by design.")
	}
	for i, rd := range group {
		r := rd.Space.Result
		line := fmt.Sprintf("%s: %s would take %s less space (zeros, dedup %s, lz4 %s): %s stored of %s", names[i],
			sizeText(r.LogicalBytes), times(r.SavingsRatio), times(r.DedupRatio), times(r.Compression["lz4"].Ratio),
			sizeText(r.StoredBytes), sizeText(r.LogicalBytes))
		if unbounded(r) {
			line = fmt.Sprintf("%s: %s would take no space: every block is zero", names[i], sizeText(r.LogicalBytes))
		}
		if a := rd.Space.Actual; a != nil && a.Compress != "none" {
			line += fmt.Sprintf("; %s with %s compression really stored it %s smaller", a.FS, a.Compress, times(a.Ratio))
		}
		// The summary repeats this sentence on its own: it carries its caveats.
		var caveats []string
		if r.Partial {
			caveats = append(caveats, "partial: the scan stopped early")
		}
		if rd.Space.LiveNote != "" {
			caveats = append(caveats, "live: the data was in use")
		}
		if len(caveats) > 0 {
			line += " (" + strings.Join(caveats, "; ") + ")"
		}
		s.finding(line + ".")
	}
	return s
}

// ratioText is a compression ratio, with its 95% interval when it is
// estimated from a sample: "1.43x (1.42–1.45)".
func ratioText(c space.Compression) string {
	if !c.Sampled() {
		return times(c.Ratio)
	}
	return times(c.Ratio) + " (" + interval(c.RatioCI95Low, c.RatioCI95High) + ")"
}

// sampledEvery lists the zstd sample steps of the scans that sampled
// ("32", "8 or 32"), or is "" when every scan was exact.
func sampledEvery(group []*runData) string {
	var steps []string
	for _, rd := range group {
		if c := rd.Space.Compression["zstd"]; c.Sampled() && !slices.Contains(steps, strconv.Itoa(c.SampleEvery)) {
			steps = append(steps, strconv.Itoa(c.SampleEvery))
		}
	}
	return strings.Join(steps, " or ")
}

// unbounded says whether the scan found data but nothing to store (every
// block zero): its SavingsRatio is then 0, standing for unbounded.
func unbounded(r space.Result) bool { return r.SavingsRatio == 0 && r.LogicalBytes > 0 }

// savingsText formats the savings ratio, "unbounded" for all-zero data.
func savingsText(r space.Result) string {
	if unbounded(r) {
		return "unbounded"
	}
	return times(r.SavingsRatio)
}

// sizeText formats a scan's byte count: 0 is a size it measured (an empty
// directory, all-zero data stored), not an unknown one as bytesText has it.
func sizeText(n int64) string {
	if n == 0 {
		return "0B"
	}
	return bytesText(n)
}

// spaceName names a scan in tables: its label, with the engine of the
// instance when a TPC-C run of the same instance says it.
func spaceName(rd *runData, runs []*runData) string {
	in := rd.Place.Instance
	if in == "" {
		return rd.Label
	}
	for _, o := range runs {
		if o.Kind == stored.KindTPCC && o.Place.Instance == in {
			if e := o.Params.Engine(); e != "" {
				return rd.Label + " (" + e + ")"
			}
		}
	}
	return rd.Label
}
