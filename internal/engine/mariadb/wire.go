package mariadb

import (
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/go-sql-driver/mysql"

	"github.com/tierbench/tierbench/internal/rawconn"
)

// The routines mode's CALLs, on the server's binary protocol by this
// package's own code, on the socket go-sql-driver/mysql connected and
// logged in with (the driver still does the handshake, the statements mode
// and everything else). A CALL is one COM_STMT_EXECUTE; its reply is the
// procedure's one result set, then the OK that ends the CALL.
//
// The driver reads that closing OK before it returns the call's rows, and
// the server often sends it in a packet of its own a moment after the
// result set: a second wait for the socket, with its thread wake-up, in
// about a third of the transactions. The procedures commit before they
// select their outputs (routines.sql), so the result set is the
// transaction's end; callWire returns with it and reads the closing OK, if
// it has not come yet, with the next call's reply (owed). It also sends
// each request from inside the wait for its reply (rawconn.HoldWrite),
// and a wait that has an OK owed sleeps through it (rawconn.WakeAt): one
// wake-up a call, not two. It allocates nothing a call beyond the values
// it returns.
//
// It is used only on a plain socket (no TLS, whose records the driver
// reads) to a server that announces CLIENT_DEPRECATE_EOF, as MariaDB 10.2
// and MySQL 5.7.5 on do; otherwise the calls go through the driver.

// Protocol constants (MariaDB's "Client/Server Protocol" pages).
const (
	comStmtPrepare  = 0x16
	comStmtExecute  = 0x17
	capMySQL        = 1       // CLIENT_MYSQL: not set by MariaDB, which then announces extended capabilities
	capDeprecateEOF = 1 << 24 // CLIENT_DEPRECATE_EOF
	extCacheMeta    = 1 << 4  // MARIADB_CLIENT_CACHE_METADATA, which the driver asks for
	statusMoreRes   = 0x0008  // SERVER_MORE_RESULTS_EXISTS
	flagUnsigned    = 0x0020  // UNSIGNED_FLAG of a column definition
	maxPacket       = 1<<24 - 1
	minOK           = 4 + 7 // the shortest OK packet, header included; an ERR packet is longer
)

// Column types of the binary protocol that a result row may hold.
const (
	typeDecimal    = 0x00
	typeTiny       = 0x01
	typeShort      = 0x02
	typeLong       = 0x03
	typeNull       = 0x06
	typeLongLong   = 0x08
	typeInt24      = 0x09
	typeYear       = 0x0d
	typeVarchar    = 0x0f
	typeBit        = 0x10
	typeJSON       = 0xf5
	typeNewDecimal = 0xf6
	typeString     = 0xfe // also a parameter's type for text
)

// callWire is a routine worker's own protocol path.
type callWire struct {
	conn  *rawconn.Conn
	stmts [numCalls]wireStmt
	req   []byte
	buf   []byte // buf[pos:end] has been read and not used yet
	pos   int
	end   int
	owed  bool // the last CALL's closing OK is still to be read
	okLen int  // the length of the last closing OK read, header included
	// inReply says a reply is not read to its end: an error then closes
	// the connection.
	inReply bool
	// cacheMeta says the server may leave out a result's column
	// definitions when they are those it sent the statement's last time.
	cacheMeta bool
}

type wireStmt struct {
	id     uint32
	params int
	cols   []wireCol // the result's columns as last sent
}

type wireCol struct {
	typ      byte
	unsigned bool
}

// greetingConn notes the capabilities the server announces in its
// greeting, the first packet it sends, as the driver reads it.
type greetingConn struct {
	*rawconn.Conn
	caps, ext uint32
	read      bool
}

func (g *greetingConn) Read(b []byte) (int, error) {
	n, err := g.Conn.Read(b)
	if !g.read {
		g.read = true
		g.caps, g.ext = greetingCaps(b[:n])
	}
	return n, err
}

// greetingCaps returns the capability flags and MariaDB's extended ones of
// a protocol-10 greeting packet (Initial Handshake), or zeros when b does
// not hold one whole.
func greetingCaps(b []byte) (caps, ext uint32) {
	if len(b) < 5 {
		return 0, 0
	}
	n := payloadLen(b)
	if n < 1 || n > len(b)-4 || b[4] != 10 {
		return 0, 0
	}
	p := b[5 : 4+n]
	nul := -1
	for i, c := range p {
		if c == 0 {
			nul = i
			break
		}
	}
	// server version NUL, connection id (4), scramble part 1 (8), filler
	// (1), capabilities low (2), collation (1), status (2), capabilities
	// high (2).
	// Then the scramble's length (1), reserved (6), and MariaDB's extended
	// capabilities (4) where CLIENT_MYSQL is not set.
	if nul < 0 || len(p) < nul+1+4+8+1+2+1+2+2+1+6+4 {
		return 0, 0
	}
	p = p[nul+1+4+8+1:]
	caps = uint32(binary.LittleEndian.Uint16(p)) | uint32(binary.LittleEndian.Uint16(p[5:]))<<16
	if caps&capMySQL == 0 {
		ext = binary.LittleEndian.Uint32(p[14:])
	}
	return caps, ext
}

// newCallWire prepares the calls on the connection g has seen the
// greeting of, or returns nil when the driver must make the calls.
func newCallWire(g *greetingConn) (*callWire, error) {
	if g == nil || g.caps&capDeprecateEOF == 0 {
		return nil, nil
	}
	cw := &callWire{conn: g.Conn, req: make([]byte, 0, 1024), buf: make([]byte, 4096), cacheMeta: g.ext&extCacheMeta != 0}
	for i, sql := range callSQL {
		st, err := cw.prepare(sql)
		if err != nil {
			return nil, err
		}
		cw.stmts[i] = st
	}
	return cw, nil
}

// prepare prepares sql (COM_STMT_PREPARE): the reply is an OK with the
// statement's id and counts, then a definition per parameter and per
// column.
func (cw *callWire) prepare(sql string) (wireStmt, error) {
	cw.req = append(cw.req[:0], 0, 0, 0, 0, comStmtPrepare)
	cw.req = append(cw.req, sql...)
	if err := cw.send(); err != nil {
		return wireStmt{}, err
	}
	p, err := cw.packet()
	if err != nil {
		return wireStmt{}, err
	}
	if p[0] == 0xff {
		return wireStmt{}, fmt.Errorf("preparing %.60q: %w", sql, errPacket(p))
	}
	if p[0] != 0 || len(p) < 12 {
		return wireStmt{}, fmt.Errorf("preparing %.60q: the server's reply is not a prepare OK", sql)
	}
	st := wireStmt{id: binary.LittleEndian.Uint32(p[1:]), params: int(binary.LittleEndian.Uint16(p[7:]))}
	for range st.params + int(binary.LittleEndian.Uint16(p[5:])) {
		if _, err := cw.packet(); err != nil {
			return wireStmt{}, err
		}
	}
	return st, nil
}

// send sends cw.req, a packet whose 4-byte header is left to fill, with
// the next read.
func (cw *callWire) send() error {
	n := len(cw.req) - 4
	if n >= maxPacket {
		return fmt.Errorf("a request of %d bytes is too long for one packet", n)
	}
	cw.req[0], cw.req[1], cw.req[2], cw.req[3] = byte(n), byte(n>>8), byte(n>>16), 0
	cw.conn.HoldWrite()
	_, err := cw.conn.Write(cw.req)
	return err
}

// packet returns the next packet's payload, valid until the next call.
func (cw *callWire) packet() ([]byte, error) {
	for {
		b := cw.buf[cw.pos:cw.end]
		need := 4
		if len(b) >= 4 {
			n := payloadLen(b)
			switch {
			case n == maxPacket:
				return nil, errors.New("the server sent a packet too long for a CALL's reply")
			case n == 0:
				return nil, errors.New("the server sent an empty packet")
			case len(b) >= 4+n:
				cw.pos += 4 + n
				return b[4 : 4+n], nil
			}
			need = 4 + n
		}
		// Room for the rest: the unread bytes to the front, a larger
		// buffer for a packet that could not fit.
		if cw.pos > 0 {
			cw.end = copy(cw.buf, b)
			cw.pos = 0
		}
		if need > len(cw.buf) {
			cw.buf = append(cw.buf[:cw.end], make([]byte, 2*need-cw.end)...)
		}
		n, err := cw.conn.Read(cw.buf[cw.end:])
		if err != nil {
			return nil, err
		}
		cw.end += n
	}
}

// buffered says whether the next packet has been read whole already.
func (cw *callWire) buffered() bool {
	b := cw.buf[cw.pos:cw.end]
	return len(b) >= 4 && len(b)-4 >= payloadLen(b)
}

// payloadLen reads the payload length from a packet's header at b[0:3]
// (then comes its sequence number).
func payloadLen(b []byte) int { return int(b[0]) | int(b[1])<<8 | int(b[2])<<16 }

// errPacket turns an ERR packet into the driver's error type, which
// classify reads.
func errPacket(p []byte) error {
	if len(p) < 3 {
		return errors.New("the server sent a truncated error packet")
	}
	e := &mysql.MySQLError{Number: binary.LittleEndian.Uint16(p[1:])}
	msg := p[3:]
	if len(msg) >= 6 && msg[0] == '#' {
		copy(e.SQLState[:], msg[1:6])
		msg = msg[6:]
	}
	e.Message = string(msg)
	return e
}

// call runs statement k with args and decodes its one row of n columns
// into dest; the []byte values point into the read buffer, valid until
// decode returns. An error that leaves the reply unread, or the protocol
// in doubt, closes the socket: the connection's replies could no
// longer be matched to its requests.
func (cw *callWire) call(k, n int, args, dest []driver.Value, decode func([]driver.Value) error) error {
	cw.inReply = true
	err := cw.exchange(k, n, args, dest, decode)
	if err != nil && cw.inReply {
		_ = cw.conn.Close()
	}
	return err
}

func (cw *callWire) exchange(k, n int, args, dest []driver.Value, decode func([]driver.Value) error) error {
	if err := cw.execute(cw.stmts[k], args); err != nil {
		return err
	}
	if cw.owed {
		cw.owed = false
		if err := cw.finish(); err != nil {
			return err
		}
	}
	p, err := cw.packet()
	if err != nil {
		return err
	}
	switch p[0] {
	case 0xff:
		cw.inReply = false
		return errPacket(p) // the procedure failed; its handler rolled back
	case 0x00:
		return cw.after(p, fmt.Errorf("%s returned no result set", callSQL[k]))
	}
	st := &cw.stmts[k]
	cols, size := lenenc(p)
	if size == 0 || cols > uint64(len(dest)) {
		return fmt.Errorf("%s: the server sent a malformed result set", callSQL[k])
	}
	// With metadata caching, a byte after the count says whether the
	// column definitions follow (1) or are those sent last time (0).
	if !cw.cacheMeta || len(p) > size && p[size] == 1 {
		st.cols = st.cols[:0]
		for range int(cols) {
			if p, err = cw.packet(); err != nil {
				return err
			}
			c, err := columnDef(p)
			if err != nil {
				return err
			}
			st.cols = append(st.cols, c)
		}
	} else if len(st.cols) != int(cols) {
		return fmt.Errorf("%s: the server left out column definitions it never sent", callSQL[k])
	}
	var decodeErr error
	rows := 0
	for {
		if p, err = cw.packet(); err != nil {
			return err
		}
		switch p[0] {
		case 0x00: // a row
			if rows++; rows == 1 && int(cols) == n {
				if decodeErr = binaryRow(p, st.cols, dest[:n]); decodeErr == nil {
					decodeErr = decode(dest[:n])
				}
			}
			continue
		case 0xfe: // the OK that ends the rows
		case 0xff:
			cw.inReply = false
			return errPacket(p)
		default:
			return fmt.Errorf("%s: the server sent a malformed row", callSQL[k])
		}
		switch {
		case decodeErr != nil:
		case int(cols) != n:
			decodeErr = fmt.Errorf("%s returned %d columns, want %d", callSQL[k], cols, n)
		case rows != 1:
			decodeErr = fmt.Errorf("%s returned %d rows, want 1", callSQL[k], rows)
		}
		return cw.after(p, decodeErr)
	}
}

var errMalformedOK = errors.New("the server sent a malformed OK packet")

// after handles the OK (p) that ends a result or a CALL: with more results
// to come, the CALL's closing OK is read now if it is here already, and
// owed otherwise. It returns err.
func (cw *callWire) after(p []byte, err error) error {
	last, okErr := cw.ends(p)
	if okErr != nil {
		return okErr
	}
	if last {
		return err
	}
	if !cw.buffered() {
		cw.inReply, cw.owed = false, true
		if cw.pos == cw.end {
			// The owed OK nearly always comes alone, before or after the
			// next call has gone, and that call's reply later: neither
			// the poller nor the wait for the reply wakes for the OK (as
			// long as the last one). The OK and the reply are each at
			// least a bare OK long, so that many bytes are sure to come.
			cw.conn.WakeAt(min(max(cw.okLen, minOK)+1, 2*minOK))
		}
		return err
	}
	if ferr := cw.finish(); ferr != nil {
		return ferr
	}
	return err
}

// ends reads the OK packet p and says whether it is the reply's last
// (no more results to come), which ends the reply.
func (cw *callWire) ends(p []byte) (bool, error) {
	status, ok := okStatus(p)
	if !ok {
		return false, errMalformedOK
	}
	if status&statusMoreRes != 0 {
		return false, nil
	}
	cw.inReply = false
	return true, nil
}

// finish reads what is left of a CALL's reply after its result set: the
// closing OK. Anything else is an error that leaves the connection in
// doubt (inReply stays set): an error there cannot belong to the call
// being made, nor to the one that has returned.
func (cw *callWire) finish() error {
	for {
		p, err := cw.packet()
		if err != nil {
			return err
		}
		switch p[0] {
		case 0x00, 0xfe:
			if last, err := cw.ends(p); err != nil || last {
				cw.okLen = 4 + len(p)
				return err
			}
		case 0xff:
			return fmt.Errorf("a CALL ended with an error after its result: %w", errPacket(p))
		default:
			return errors.New("a CALL returned more than one result set")
		}
	}
}

// execute sends COM_STMT_EXECUTE of st with args: int64 as BIGINT, string
// and []byte as text, nil as NULL.
func (cw *callWire) execute(st wireStmt, args []driver.Value) error {
	if len(args) != st.params {
		return fmt.Errorf("%d arguments for %d parameters", len(args), st.params)
	}
	r := append(cw.req[:0], 0, 0, 0, 0, comStmtExecute,
		byte(st.id), byte(st.id>>8), byte(st.id>>16), byte(st.id>>24),
		0,          // no cursor
		1, 0, 0, 0) // iteration count
	if len(args) > 0 {
		nulls := len(r)
		for range (len(args) + 7) / 8 {
			r = append(r, 0)
		}
		r = append(r, 1) // the types follow
		for i, a := range args {
			switch a.(type) {
			case int64:
				r = append(r, typeLongLong, 0)
			case string, []byte:
				r = append(r, typeString, 0)
			case nil:
				r[nulls+i/8] |= 1 << (i % 8)
				r = append(r, typeNull, 0)
			default:
				return fmt.Errorf("argument %d is a %T", i+1, a)
			}
		}
		for _, a := range args {
			switch a := a.(type) {
			case int64:
				r = binary.LittleEndian.AppendUint64(r, uint64(a))
			case string:
				r = append(appendLenenc(r, uint64(len(a))), a...)
			case []byte:
				r = append(appendLenenc(r, uint64(len(a))), a...)
			}
		}
	}
	cw.req = r
	return cw.send()
}

func appendLenenc(b []byte, n uint64) []byte {
	switch {
	case n < 0xfb:
		return append(b, byte(n))
	case n < 1<<16:
		return append(b, 0xfc, byte(n), byte(n>>8))
	case n < 1<<24:
		return append(b, 0xfd, byte(n), byte(n>>8), byte(n>>16))
	}
	return binary.LittleEndian.AppendUint64(append(b, 0xfe), n)
}

// lenenc reads a length-encoded integer at b[0]; size is how many bytes it
// took, 0 when b is too short or holds NULL (0xfb) or a packet marker.
func lenenc(b []byte) (v uint64, size int) {
	if len(b) == 0 {
		return 0, 0
	}
	switch b[0] {
	case 0xfb, 0xff:
		return 0, 0
	case 0xfc:
		if len(b) >= 3 {
			return uint64(binary.LittleEndian.Uint16(b[1:])), 3
		}
	case 0xfd:
		if len(b) >= 4 {
			return uint64(b[1]) | uint64(b[2])<<8 | uint64(b[3])<<16, 4
		}
	case 0xfe:
		if len(b) >= 9 {
			return binary.LittleEndian.Uint64(b[1:]), 9
		}
	default:
		return uint64(b[0]), 1
	}
	return 0, 0
}

// okStatus reads an OK packet's (0x00 or 0xfe header) status flags:
// affected rows and insert id come first, as length-encoded integers.
func okStatus(p []byte) (uint16, bool) {
	b := p[1:]
	for range 2 {
		_, size := lenenc(b)
		if size == 0 {
			return 0, false
		}
		b = b[size:]
	}
	if len(b) < 2 {
		return 0, false
	}
	return binary.LittleEndian.Uint16(b), true
}

// columnDef reads a column definition's type and UNSIGNED flag: six
// length-encoded strings (catalog, schema, table and its original name,
// column and its original name), then a fixed part: its length (0x0c),
// character set (2), column length (4), type (1), flags (2), decimals (1).
func columnDef(p []byte) (wireCol, error) {
	b := p
	for range 6 {
		n, size := lenenc(b)
		if size == 0 || uint64(len(b)-size) < n {
			return wireCol{}, errors.New("the server sent a malformed column definition")
		}
		b = b[size+int(n):]
	}
	if len(b) < 1+2+4+1+2 {
		return wireCol{}, errors.New("the server sent a malformed column definition")
	}
	return wireCol{typ: b[7], unsigned: binary.LittleEndian.Uint16(b[8:])&flagUnsigned != 0}, nil
}

// binaryRow decodes a binary-protocol row (0x00, a NULL bitmap offset by
// two bits, the values) into dest: integers as int64, text and decimals as
// []byte into p, NULL as nil.
func binaryRow(p []byte, cols []wireCol, dest []driver.Value) error {
	nullBytes := (len(cols) + 7 + 2) / 8
	if len(p) < 1+nullBytes || p[0] != 0 {
		return errors.New("the server sent a malformed row")
	}
	nulls, b := p[1:1+nullBytes], p[1+nullBytes:]
	for i, c := range cols {
		if bit := i + 2; nulls[bit/8]&(1<<(bit%8)) != 0 {
			dest[i] = nil
			continue
		}
		var size int
		switch c.typ {
		case typeTiny:
			size = 1
		case typeShort, typeYear:
			size = 2
		case typeLong, typeInt24:
			size = 4
		case typeLongLong:
			size = 8
		case typeDecimal, typeNewDecimal, typeVarchar, typeBit, typeJSON, 0xf7, 0xf8, 0xf9, 0xfa, 0xfb, 0xfc, 0xfd, typeString, 0xff:
			n, lsize := lenenc(b)
			if lsize == 0 || uint64(len(b)-lsize) < n {
				return errors.New("the server sent a malformed row")
			}
			dest[i] = b[lsize : lsize+int(n)]
			b = b[lsize+int(n):]
			continue
		default:
			return fmt.Errorf("result column %d has type %#x, which a CALL's outputs never have here", i+1, c.typ)
		}
		if len(b) < size {
			return errors.New("the server sent a malformed row")
		}
		var u uint64
		for j := size - 1; j >= 0; j-- {
			u = u<<8 | uint64(b[j])
		}
		v := int64(u)
		if !c.unsigned && size < 8 { // sign-extend
			shift := 64 - 8*size
			v = int64(u<<shift) >> shift
		}
		dest[i] = v
		b = b[size:]
	}
	return nil
}
