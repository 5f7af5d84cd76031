package telemetry

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The tracer reads the kernel's ring buffer as it is, page by page, from
// per_cpu/cpuN/trace_pipe_raw, instead of trace_pipe's text: formatting an
// event as text (a vsnprintf of a dozen fields, and the task's name and
// flags) cost more CPU than anything else the tracer did, all of it charged
// to tierbench, on the host under test. The binary layout is not a fixed
// ABI: it is described by tracefs's events/header_page, events/header_event
// and each event's format file, which is how perf and trace-cmd read it too.
// The event headers (type_len, time_delta) follow include/linux/ring_buffer.h.

// Ring buffer event header: type_len in the low 5 bits, time_delta above.
const (
	rbTypePadding    = 29 // a discarded event, or with no delta the end of the page
	rbTypeTimeExtend = 30 // a delta too long for 27 bits: its high part follows
	rbTypeTimeStamp  = 31 // an absolute time stamp
	rbMaxSmallData   = 28 // type_len 1..28: that many 32-bit words of data
	rbTsShift        = 27
	rbCommitMask     = 1<<27 - 1 // a page's commit: its data size; the high bits flag missed events
	rbAbsTsMask      = 1<<59 - 1 // an absolute stamp holds the low 59 bits of the time
)

// rawField is where a field sits in a record: offset and size in bytes.
type rawField struct{ off, size int }

// rawLayout says how to read block_rq_issue and block_rq_complete records
// from the pages of trace_pipe_raw.
type rawLayout struct {
	pageTs, pageCommit rawField // in a page's header
	pageData           int      // where the events start

	commonType rawField // the event id, first in every record
	issueID    uint64
	completeID uint64
	// Field positions of block_rq_issue ([0]) and block_rq_complete ([1]).
	dev, sector, nrSector [2]rawField
}

// readRawLayout reads the layout from a tracefs mount (or an instance of
// it: both hold events/).
func readRawLayout(tracefs string) (*rawLayout, error) {
	events := filepath.Join(tracefs, "events")
	read := func(rel string) (string, error) {
		b, err := os.ReadFile(filepath.Join(events, rel))
		return string(b), err
	}
	page, err := read("header_page")
	if err != nil {
		return nil, err
	}
	issue, err := read(filepath.Join("block", "block_rq_issue", "format"))
	if err != nil {
		return nil, err
	}
	complete, err := read(filepath.Join("block", "block_rq_complete", "format"))
	if err != nil {
		return nil, err
	}
	return parseRawLayout(page, issue, complete)
}

// parseRawLayout builds the layout from the text of events/header_page and
// the two events' format files.
func parseRawLayout(headerPage, issueFormat, completeFormat string) (*rawLayout, error) {
	l := &rawLayout{}
	hp := formatFields(headerPage)
	var ok bool
	if l.pageTs, ok = hp["timestamp"]; !ok || l.pageTs.size != 8 {
		return nil, fmt.Errorf("header_page: no 8-byte timestamp field")
	}
	if l.pageCommit, ok = hp["commit"]; !ok || (l.pageCommit.size != 4 && l.pageCommit.size != 8) {
		return nil, fmt.Errorf("header_page: no 4- or 8-byte commit field")
	}
	data, ok := hp["data"]
	if !ok {
		return nil, fmt.Errorf("header_page: no data field")
	}
	l.pageData = data.off
	for i, format := range []string{issueFormat, completeFormat} {
		name := blockEvents[i]
		id, ok := formatID(format)
		if !ok {
			return nil, fmt.Errorf("%s format: no ID", name)
		}
		fields := formatFields(format)
		ct, ok := fields["common_type"]
		if !ok || ct.size != 2 && ct.size != 4 {
			return nil, fmt.Errorf("%s format: no common_type field", name)
		}
		if i == 0 {
			l.commonType, l.issueID = ct, id
		} else if ct != l.commonType {
			return nil, fmt.Errorf("%s format: common_type at %+v, block_rq_issue has it at %+v", name, ct, l.commonType)
		} else {
			l.completeID = id
		}
		for _, f := range []struct {
			name  string
			dst   *rawField
			sizes []int
		}{{"dev", &l.dev[i], []int{4, 8}}, {"sector", &l.sector[i], []int{8}}, {"nr_sector", &l.nrSector[i], []int{4, 8}}} {
			fl, ok := fields[f.name]
			if !ok || !slices.Contains(f.sizes, fl.size) {
				return nil, fmt.Errorf("%s format: no field %s of %v bytes", name, f.name, f.sizes)
			}
			*f.dst = fl
		}
	}
	if l.issueID == l.completeID {
		return nil, fmt.Errorf("block_rq_issue and block_rq_complete share ID %d", l.issueID)
	}
	return l, nil
}

// formatFields reads the fields of a tracefs format text, lines such as
//
//	field:sector_t sector;	offset:16;	size:8;	signed:0;
//	field: u64 timestamp;	offset:0;	size:8;	signed:0;
//
// by name (an array's brackets dropped).
func formatFields(text string) map[string]rawField {
	out := map[string]rawField{}
	for line := range strings.Lines(text) {
		decl, rest, ok := strings.Cut(strings.TrimSpace(line), ";")
		decl, isField := strings.CutPrefix(decl, "field:")
		if !ok || !isField {
			continue
		}
		words := strings.Fields(decl)
		if len(words) == 0 {
			continue
		}
		name, _, _ := strings.Cut(words[len(words)-1], "[")
		f := rawField{off: -1, size: -1}
		for attr := range strings.SplitSeq(rest, ";") {
			k, v, _ := strings.Cut(strings.TrimSpace(attr), ":")
			n, err := strconv.Atoi(v)
			switch {
			case err != nil || n < 0:
			case k == "offset":
				f.off = n
			case k == "size":
				f.size = n
			}
		}
		if f.off >= 0 && f.size >= 0 {
			out[name] = f
		}
	}
	return out
}

// formatID reads the "ID: N" line of a format text.
func formatID(text string) (uint64, bool) {
	for line := range strings.Lines(text) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "ID:"); ok {
			id, err := strconv.ParseUint(strings.TrimSpace(v), 10, 16)
			return id, err == nil
		}
	}
	return 0, false
}

// uintAt reads the unsigned integer of f in b (native byte order, as the
// kernel wrote it), or reports false when b is too short.
func uintAt(b []byte, f rawField) (uint64, bool) {
	if f.off < 0 || f.off+f.size > len(b) {
		return 0, false
	}
	b = b[f.off:]
	switch f.size {
	case 2:
		return uint64(binary.NativeEndian.Uint16(b)), true
	case 4:
		return uint64(binary.NativeEndian.Uint32(b)), true
	case 8:
		return binary.NativeEndian.Uint64(b), true
	}
	return 0, false
}

// parsePage appends the block events of one ring-buffer page, as read from
// trace_pipe_raw, to evs and returns it. Records of other events, padding
// and a page cut short are skipped; nothing in page can make it read out of
// bounds.
func (l *rawLayout) parsePage(page []byte, evs []blockEvent) []blockEvent {
	ts, ok := uintAt(page, l.pageTs)
	commit, ok2 := uintAt(page, l.pageCommit)
	if !ok || !ok2 || l.pageData > len(page) {
		return evs
	}
	data := page[l.pageData:]
	if n := commit & rbCommitMask; n < uint64(len(data)) {
		data = data[:n]
	}
	for i := 0; i+4 <= len(data); {
		h := binary.NativeEndian.Uint32(data[i:])
		typeLen, delta := h&0x1f, uint64(h>>5)
		i += 4
		var rec []byte
		switch {
		case typeLen == rbTypePadding:
			if delta == 0 || i+4 > len(data) {
				return evs // the rest of the page is unused
			}
			ts += delta
			i += int(binary.NativeEndian.Uint32(data[i:])) // counts the length word itself
			continue
		case typeLen == rbTypeTimeExtend || typeLen == rbTypeTimeStamp:
			if i+4 > len(data) {
				return evs
			}
			v := uint64(binary.NativeEndian.Uint32(data[i:]))<<rbTsShift | delta
			i += 4
			if typeLen == rbTypeTimeExtend {
				ts += v
			} else {
				ts = ts&^rbAbsTsMask | v&rbAbsTsMask
			}
			continue
		case typeLen == 0: // a long record: its length (counting this word) first
			if i+4 > len(data) {
				return evs
			}
			n := int(binary.NativeEndian.Uint32(data[i:]))
			i += 4
			if n < 4 || n-4 > len(data)-i {
				return evs
			}
			rec, i = data[i:i+n-4], i+(n-4+3)&^3
		default:
			n := int(typeLen) * 4
			if n > len(data)-i {
				return evs
			}
			rec, i = data[i:i+n], i+n
		}
		ts += delta
		if ev, ok := l.event(rec, ts); ok {
			evs = append(evs, ev)
		}
	}
	return evs
}

// event reads a block_rq_issue or block_rq_complete record.
func (l *rawLayout) event(rec []byte, ts uint64) (blockEvent, bool) {
	id, ok := uintAt(rec, l.commonType)
	if !ok {
		return blockEvent{}, false
	}
	var k int
	switch id {
	case l.issueID:
		k = 0
	case l.completeID:
		k = 1
	default:
		return blockEvent{}, false
	}
	dev, ok1 := uintAt(rec, l.dev[k])
	sector, ok2 := uintAt(rec, l.sector[k])
	nr, ok3 := uintAt(rec, l.nrSector[k])
	if !ok1 || !ok2 || !ok3 || ts > 1<<63-1 {
		return blockEvent{}, false
	}
	return blockEvent{complete: k == 1, dev: uint32(dev), sector: sector, nrSector: uint32(nr), tsNs: int64(ts)}, true
}
