package telemetry

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/testenv"
)

// The format texts of Linux 6.18's tracefs (events/header_page and
// events/block/block_rq_{issue,complete}/format).
const (
	headerPage618 = `	field: u64 timestamp;	offset:0;	size:8;	signed:0;
	field: local_t commit;	offset:8;	size:8;	signed:1;
	field: int overwrite;	offset:8;	size:1;	signed:1;
	field: char data;	offset:16;	size:4080;	signed:0;
`
	// The fields both events start with.
	blockFields618 = `	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;

	field:dev_t dev;	offset:8;	size:4;	signed:0;
	field:sector_t sector;	offset:16;	size:8;	signed:0;
	field:unsigned int nr_sector;	offset:24;	size:4;	signed:0;
`
	issueFormat618 = `name: block_rq_issue
ID: 2104
format:
` + blockFields618 + `	field:unsigned int bytes;	offset:28;	size:4;	signed:0;
	field:unsigned short ioprio;	offset:32;	size:2;	signed:0;
	field:char rwbs[10];	offset:34;	size:10;	signed:0;
	field:char comm[16];	offset:44;	size:16;	signed:0;
	field:__data_loc char[] cmd;	offset:60;	size:4;	signed:0;

print fmt: "%d,%d %s %u (%s) %llu + %u %s,%u,%u [%s]", ...
`
	completeFormat618 = `name: block_rq_complete
ID: 2107
format:
` + blockFields618 + `	field:int error;	offset:28;	size:4;	signed:1;
	field:unsigned short ioprio;	offset:32;	size:2;	signed:0;
	field:char rwbs[10];	offset:34;	size:10;	signed:0;
	field:__data_loc char[] cmd;	offset:44;	size:4;	signed:0;

print fmt: "%d,%d %s (%s) %llu + %u %s,%u,%u [%d]", ...
`
)

func TestParseRawLayout(t *testing.T) {
	l, err := parseRawLayout(headerPage618, issueFormat618, completeFormat618)
	if err != nil {
		t.Fatal(err)
	}
	want := rawLayout{
		pageTs: rawField{0, 8}, pageCommit: rawField{8, 8}, pageData: 16,
		commonType: rawField{0, 2}, issueID: 2104, completeID: 2107,
		dev:    [2]rawField{{8, 4}, {8, 4}},
		sector: [2]rawField{{16, 8}, {16, 8}}, nrSector: [2]rawField{{24, 4}, {24, 4}},
	}
	if *l != want {
		t.Errorf("layout = %+v\nwant     %+v", *l, want)
	}

	// Fields move between kernels; the layout follows the format file.
	moved := strings.Replace(completeFormat618, "sector;\toffset:16", "sector;\toffset:40", 1)
	if l, err := parseRawLayout(headerPage618, issueFormat618, moved); err != nil || l.sector[1] != (rawField{40, 8}) || l.sector[0] != (rawField{16, 8}) {
		t.Errorf("moved sector: %+v, %v", l, err)
	}

	for name, c := range map[string][3]string{
		"no commit":        {strings.Replace(headerPage618, "commit", "committed", 1), issueFormat618, completeFormat618},
		"no data":          {strings.Replace(headerPage618, "char data", "char payload", 1), issueFormat618, completeFormat618},
		"no ID":            {headerPage618, strings.Replace(issueFormat618, "ID: 2104", "", 1), completeFormat618},
		"no nr_sector":     {headerPage618, issueFormat618, strings.Replace(completeFormat618, "nr_sector", "nr_sectors", 1)},
		"2-byte sector":    {headerPage618, strings.Replace(issueFormat618, "offset:16;\tsize:8", "offset:16;\tsize:2", 1), completeFormat618},
		"same IDs":         {headerPage618, issueFormat618, strings.Replace(completeFormat618, "2107", "2104", 1)},
		"common_type away": {headerPage618, issueFormat618, strings.Replace(completeFormat618, "common_type;\toffset:0", "common_type;\toffset:4", 1)},
		"empty":            {"", "", ""},
	} {
		if l, err := parseRawLayout(c[0], c[1], c[2]); err == nil {
			t.Errorf("%s: no error, layout %+v", name, l)
		}
	}
}

// pageBuilder writes ring-buffer pages as the kernel does
// (include/linux/ring_buffer.h), for the tests.
type pageBuilder struct {
	ts   uint64
	data []byte
}

func (b *pageBuilder) word(v uint32) { b.data = binary.NativeEndian.AppendUint32(b.data, v) }

func (b *pageBuilder) header(typeLen uint32, delta uint64) { b.word(uint32(delta)<<5 | typeLen) }

// record writes a record of n bytes (n a multiple of 4 when small) with
// the event's fields at the 6.18 offsets; long ones take the type_len 0 form.
func (b *pageBuilder) record(delta uint64, n int, id uint16, dev uint32, sector uint64, nr uint32, long bool) {
	rec := make([]byte, n)
	binary.NativeEndian.PutUint16(rec[0:], id)
	binary.NativeEndian.PutUint32(rec[8:], dev)
	binary.NativeEndian.PutUint64(rec[16:], sector)
	binary.NativeEndian.PutUint32(rec[24:], nr)
	if long {
		b.header(0, delta)
		b.word(uint32(n + 4))
		b.data = append(b.data, rec...)
		for len(b.data)%4 != 0 {
			b.data = append(b.data, 0)
		}
		return
	}
	b.header(uint32(n/4), delta)
	b.data = append(b.data, rec...)
}

func (b *pageBuilder) page(size int, commitFlags uint64) []byte {
	p := make([]byte, size)
	binary.NativeEndian.PutUint64(p[0:], b.ts)
	binary.NativeEndian.PutUint64(p[8:], uint64(len(b.data))|commitFlags)
	copy(p[16:], b.data)
	return p
}

func TestParsePage(t *testing.T) {
	l, err := parseRawLayout(headerPage618, issueFormat618, completeFormat618)
	if err != nil {
		t.Fatal(err)
	}
	const dev = 254 << 20
	b := &pageBuilder{ts: 1_000_000_000}
	b.record(5, 68, 2104, dev, 100, 8, false) // issue at +5 ns
	b.record(7, 64, 9999, dev, 100, 8, false) // another event: skipped, its time counts
	b.header(rbTypeTimeExtend, 1)             // +(3<<27 | 1) ns
	b.word(3)
	b.record(2, 48, 2107, dev, 100, 8, false) // complete
	b.header(rbTypePadding, 11)               // a discarded record: 12 bytes with the header
	b.word(8)
	b.word(0xdeadbeef)
	b.record(1, 200, 2107, dev, 200, 16, true) // a long record
	b.header(rbTypeTimeStamp, 9)               // absolute: low 59 bits from here
	b.word(0)
	b.record(0, 48, 2104, dev|1, 300, 1, false)
	commit := len(b.data)
	b.record(0, 48, 2104, dev, 999, 8, false) // past the commit: not yet written
	p := b.page(4096, 1<<31)                  // missed events flagged in the commit
	binary.NativeEndian.PutUint64(p[8:], uint64(commit)|1<<31)

	got := l.parsePage(p, nil)
	const t0 = 1_000_000_000
	want := []blockEvent{
		{dev: dev, sector: 100, nrSector: 8, tsNs: t0 + 5},
		{complete: true, dev: dev, sector: 100, nrSector: 8, tsNs: t0 + 5 + 7 + (3<<27 | 1) + 2},
		{complete: true, dev: dev, sector: 200, nrSector: 16, tsNs: t0 + 5 + 7 + (3<<27 | 1) + 2 + 11 + 1},
		{dev: dev | 1, sector: 300, nrSector: 1, tsNs: 9},
	}
	if len(got) != len(want) {
		t.Fatalf("parsePage = %+v\nwant %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d = %+v, want %+v", i, got[i], want[i])
		}
	}

	// The end of the page: a padding header with no delta; what follows is not read.
	b = &pageBuilder{ts: 50}
	b.record(1, 48, 2104, dev, 1, 8, false)
	b.header(rbTypePadding, 0)
	b.record(1, 48, 2104, dev, 2, 8, false)
	if got := l.parsePage(b.page(4096, 0), nil); len(got) != 1 || got[0].sector != 1 || got[0].tsNs != 51 {
		t.Errorf("page ended by padding: %+v", got)
	}

	// Cut anywhere, a page yields a prefix of its events and never reads
	// out of bounds.
	full := p[:16+commit]
	for n := 0; n <= len(full); n++ {
		cut := l.parsePage(full[:n], nil)
		if len(cut) > len(want) {
			t.Fatalf("page cut at %d: %d events", n, len(cut))
		}
		for i := range cut {
			if cut[i] != want[i] {
				t.Fatalf("page cut at %d: event %d = %+v, want %+v", n, i, cut[i], want[i])
			}
		}
	}
}

// At tens of thousands of requests a second, parsing must not allocate
// once the slice has grown.
func TestParsePageAllocs(t *testing.T) {
	l, err := parseRawLayout(headerPage618, issueFormat618, completeFormat618)
	if err != nil {
		t.Fatal(err)
	}
	b := &pageBuilder{}
	for i := range 50 {
		b.record(100, 68, uint16(2104+3*(i%2)), 8<<20, uint64(i), 8, false)
	}
	p := b.page(4096, 0)
	evs := make([]blockEvent, 0, 64)
	if n := testing.AllocsPerRun(100, func() { evs = l.parsePage(p, evs[:0]) }); n != 0 || len(evs) != 50 {
		t.Errorf("parsePage: %v allocations, %d events; want 0 and 50", n, len(evs))
	}
}

// This kernel's own format files read as a layout (the tracer's live test
// then reads real pages with it).
func TestRawLayoutLive(t *testing.T) {
	requireRoot(t)
	tracefs, err := findTracefs()
	if err != nil {
		testenv.SkipOrFail(t, "%v", err)
	}
	l, err := readRawLayout(tracefs)
	if err != nil {
		t.Fatalf("readRawLayout(%s): %v", tracefs, err)
	}
	if l.issueID == 0 || l.completeID == 0 || l.pageData == 0 || l.sector[0].size != 8 {
		t.Errorf("layout = %+v", *l)
	}
}
