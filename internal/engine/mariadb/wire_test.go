package mariadb

import (
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// greeting builds a protocol-10 greeting packet with capabilities caps
// and, for a MariaDB server (CLIENT_MYSQL unset), extended ones ext.
func greeting(version string, caps, ext uint32) []byte {
	p := []byte{10}
	p = append(append(p, version...), 0)
	p = append(p, 1, 0, 0, 0)    // connection id
	p = append(p, "scramble"...) // scramble, part 1
	p = append(p, 0)             // filler
	p = binary.LittleEndian.AppendUint16(p, uint16(caps))
	p = append(p, 45)   // collation
	p = append(p, 2, 0) // status
	p = binary.LittleEndian.AppendUint16(p, uint16(caps>>16))
	p = append(p, 21, 0, 0, 0, 0, 0, 0) // scramble length, reserved
	p = binary.LittleEndian.AppendUint32(p, ext)
	p = append(p, "scramble part2\x00mysql_native_password\x00"...)
	return append([]byte{byte(len(p)), byte(len(p) >> 8), 0, 0}, p...)
}

func TestGreetingCaps(t *testing.T) {
	maria := greeting("11.4.5-MariaDB", capDeprecateEOF|1<<9, extCacheMeta|1)
	if caps, ext := greetingCaps(maria); caps != capDeprecateEOF|1<<9 || ext != extCacheMeta|1 {
		t.Errorf("MariaDB greeting: caps %#x ext %#x", caps, ext)
	}
	// MySQL sets CLIENT_MYSQL, and its reserved bytes are not capabilities.
	mysqlG := greeting("8.0.36", capMySQL|capDeprecateEOF, 0xffff)
	if caps, ext := greetingCaps(mysqlG); caps != capMySQL|capDeprecateEOF || ext != 0 {
		t.Errorf("MySQL greeting: caps %#x ext %#x", caps, ext)
	}
	// Not a whole greeting: nothing, so the calls go through the driver.
	for _, b := range [][]byte{nil, maria[:3], maria[:40], maria[:len(maria)-1], append([]byte{0, 0, 0, 0}, maria[4:]...)} {
		if caps, ext := greetingCaps(b); caps != 0 || ext != 0 {
			t.Errorf("greetingCaps(%d bytes) = %#x, %#x; want zeros", len(b), caps, ext)
		}
	}
	bad := append([]byte(nil), maria...)
	bad[4] = 9 // protocol version
	if caps, _ := greetingCaps(bad); caps != 0 {
		t.Errorf("a protocol-9 greeting gave caps %#x", caps)
	}
}

func TestLenenc(t *testing.T) {
	for _, n := range []uint64{0, 1, 250, 251, 252, 0xffff, 0x10000, 0xffffff, 0x1000000, 1 << 40} {
		b := appendLenenc([]byte{}, n)
		b = append(b, 'x') // what follows is not part of it
		v, size := lenenc(b)
		if v != n || size != len(b)-1 {
			t.Errorf("lenenc(appendLenenc(%d)) = %d, %d bytes; want %d, %d", n, v, size, n, len(b)-1)
		}
		if _, size := lenenc(b[:len(b)-2]); size != 0 && len(b) > 2 {
			t.Errorf("a truncated encoding of %d read as %d bytes", n, size)
		}
	}
	for _, b := range [][]byte{{0xfb}, {0xff}, {}} {
		if _, size := lenenc(b); size != 0 {
			t.Errorf("lenenc(%x) took %d bytes; want none (NULL, a marker, or nothing)", b, size)
		}
	}
}

func TestOKStatus(t *testing.T) {
	// 0xfe header (the rows' end), affected rows 300 (3 bytes), insert id
	// 0, status SERVER_MORE_RESULTS_EXISTS|autocommit, 0 warnings.
	p := []byte{0xfe, 0xfc, 0x2c, 0x01, 0x00, 0x0a, 0x00, 0x00, 0x00}
	if s, ok := okStatus(p); !ok || s != 0x000a {
		t.Errorf("okStatus = %#x, %v; want 0xa", s, ok)
	}
	if _, ok := okStatus(p[:5]); ok {
		t.Error("a truncated OK packet read")
	}
}

func TestErrPacket(t *testing.T) {
	p := append([]byte{0xff, 0xbd, 0x04}, "#40001Deadlock found"...)
	var me *mysql.MySQLError
	if err := errPacket(p); !errors.As(err, &me) || me.Number != 1213 || string(me.SQLState[:]) != "40001" || me.Message != "Deadlock found" {
		t.Errorf("errPacket = %#v", err)
	}
	if kind := classify(errPacket(p), false).Kind; kind != "deadlock" {
		t.Errorf("classified as %s; want deadlock", kind)
	}
	if err := errPacket([]byte{0xff, 1}); err == nil || errors.As(err, &me) {
		t.Errorf("a truncated error packet gave %v", err)
	}
}

// columnDefPacket builds a column definition of type typ with flags.
func columnDefPacket(name string, typ byte, flags uint16) []byte {
	var p []byte
	for _, s := range []string{"def", "", "", "", name, ""} {
		p = append(appendLenenc(p, uint64(len(s))), s...)
	}
	p = append(p, 0x0c, 63, 0, 20, 0, 0, 0, typ)
	p = binary.LittleEndian.AppendUint16(p, flags)
	return append(p, 0, 0, 0)
}

func TestColumnDef(t *testing.T) {
	c, err := columnDef(columnDefPacket("o_id", typeLong, flagUnsigned|1))
	if err != nil || c != (wireCol{typ: typeLong, unsigned: true}) {
		t.Errorf("columnDef = %+v, %v", c, err)
	}
	p := columnDefPacket("total_cents", typeLongLong, 0)
	if c, err := columnDef(p); err != nil || c != (wireCol{typ: typeLongLong}) {
		t.Errorf("columnDef = %+v, %v", c, err)
	}
	for _, cut := range []int{3, 12, len(p) - 6} {
		if _, err := columnDef(p[:cut]); err == nil {
			t.Errorf("a column definition cut to %d bytes read", cut)
		}
	}
}

func TestBinaryRow(t *testing.T) {
	cols := []wireCol{
		{typ: typeTiny}, {typ: typeShort}, {typ: typeLong}, {typ: typeLongLong},
		{typ: typeLong, unsigned: true}, {typ: typeNewDecimal}, {typ: 0xfd}, {typ: typeLongLong},
	}
	// The eighth column (index 7) is NULL: bit 7+2 of the bitmap.
	p := []byte{0x00, 0x00, 0x02}
	p = append(p, 0xff)                   // TINY -1
	p = append(p, 0xfe, 0xff)             // SHORT -2
	p = append(p, 0x2c, 0x01, 0x00, 0x00) // LONG 300
	p = binary.LittleEndian.AppendUint64(p, uint64(1)<<40|7)
	p = append(p, 0xff, 0xff, 0xff, 0xff)      // LONG UNSIGNED 4294967295
	p = append(appendLenenc(p, 5), "-1.50"...) // DECIMAL
	p = append(appendLenenc(p, 11), "2101,0,2102"...)
	dest := make([]driver.Value, len(cols))
	if err := binaryRow(p, cols, dest); err != nil {
		t.Fatal(err)
	}
	want := []driver.Value{int64(-1), int64(-2), int64(300), int64(1<<40 | 7), int64(4294967295), []byte("-1.50"), []byte("2101,0,2102"), nil}
	if !reflect.DeepEqual(dest, want) {
		t.Errorf("binaryRow = %v; want %v", dest, want)
	}
	// Truncated anywhere: an error, never a panic.
	for cut := range len(p) {
		if err := binaryRow(p[:cut], cols, dest); err == nil {
			t.Errorf("a row cut to %d bytes read", cut)
		}
	}
	if err := binaryRow([]byte{0, 0, 1, 2, 3}, []wireCol{{typ: 0x0c}}, dest); err == nil || !strings.Contains(err.Error(), "type 0xc") {
		t.Errorf("a DATETIME column: %v; want an error naming its type", err)
	}
}
