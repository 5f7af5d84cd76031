package tpch

import (
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// The comments of every table are cut from one pool of text, as the
// specification's generator makes it (clause 4.2.2.10; dbgen's text.c):
// 300 MiB of sentences from a small grammar, drawn on their own stream,
// made once. A comment is a piece of the pool at a random offset, of a
// random length.

// textPoolSize is the pool's length in bytes.
const textPoolSize = 300 * 1024 * 1024

var pool struct {
	once sync.Once
	text []byte
}

// textPool returns the pool, making it on first use (about a second).
func textPool() []byte {
	pool.once.Do(func() { pool.text = makeTextPool(textPoolSize) })
	return pool.text
}

// makeTextPool makes the first size bytes of the pool: sentences, each
// followed by a space, the last cut to fit. The pool's stream is drawn as
// unif draws it, its state handed from call to call in a register rather
// than kept in a streams (the pool takes 45 million draws).
func makeTextPool(size int) []byte {
	text := poolBuffer(size + 4096) // room for the last sentence, cut below
	v := streamDefs[sTextPool].seed
	for n := 0; n < size; {
		n, v = sentence(text, n, v)
		text[n] = ' '
		n++
	}
	return text[:size:size]
}

// pickAt draws a member of p's distribution on the stream whose state is
// v, and returns its index and the stream's next state.
func pickAt(p *picker, v int64) (int, int64) {
	v = next(v)
	return int(p.at[scaledSmall(v, 0, int64(len(p.at))-1)]), v
}

// sentence writes a sentence into b from n on, drawing on the stream
// whose state is v, and returns where it ends and the stream's state: a
// grammar form, its phrases, a terminator in place of the last phrase's
// trailing space. b has room for a sentence past n.
func sentence(b []byte, n int, v int64) (int, int64) {
	g := &grammarWords
	var k int
	k, v = pickAt(&g.sentences, v)
	form := g.sentences.d[k].text
	for k := 0; k < len(form); k++ {
		switch form[k] {
		case 'V':
			n, v = phrase(b, n, &g.verbPhrases, v)
		case 'N':
			n, v = phrase(b, n, &g.nounPhrases, v)
		case 'P':
			var j int
			j, v = pickAt(&g.prepositions, v)
			n += copy(b[n:], g.prepositions.d[j].text)
			n += copy(b[n:], " the ")
			n, v = phrase(b, n, &g.nounPhrases, v)
		case 'T':
			var j int
			j, v = pickAt(&g.terminators, v)
			n--
			n += copy(b[n:], g.terminators.d[j].text)
		}
	}
	return n, v
}

// phrase writes a phrase of a form drawn from forms into b from n on, and
// returns where it ends and the stream's state: for each of its tokens, a
// word of the part of speech the token's first letter names, then the
// token's punctuation if it has any, then a space. Each is written as 16
// bytes, the next word over the spare ones: two stores, where a copy of
// its length took a call.
func phrase(b []byte, n int, forms *phraseForms, v int64) (int, int64) {
	var f int
	f, v = pickAt(&forms.picker, v)
	toks := forms.forms[f]
	for k := range toks {
		tok := &toks[k] // not a copy of its three slices
		var j int
		j, v = pickAt(&tok.words, v)
		w := &tok.texts[j]
		*(*[16]byte)(b[n:]) = w.text
		n += int(w.n)
	}
	return n, v
}

// A picker draws a member of a distribution as pick does, by a table of
// its weights instead of a search: at[j-1] is the member a draw of j falls
// on. The grammar's distributions weigh at most 456 in all.
type picker struct {
	d  dist
	at []uint8
}

func newPicker(d dist) picker {
	p := picker{d: d, at: make([]uint8, d.total())}
	for j := range p.at {
		for int64(j+1) > d[p.at[j]].weight {
			p.at[j]++
		}
		if j+1 < len(p.at) {
			p.at[j+1] = p.at[j]
		}
	}
	return p
}

// phraseForms are a phrase's forms, parsed once into tokens.
type phraseForms struct {
	picker
	forms [][]token
}

// token is a word of a form: the words it is drawn from, and each of them
// as the pool has it there, with the token's punctuation and a space.
type token struct {
	words picker
	texts []word16
}

// word16 is a word of at most 16 bytes, padded to 16.
type word16 struct {
	text [16]byte
	n    uint8
}

// grammarWords are the pickers of the pool's grammar.
var grammarWords = func() (g struct {
	nounPhrases, verbPhrases                                 phraseForms
	sentences, prepositions, terminators                     picker
	articles, adjectives, adverbs, nouns, auxiliaries, verbs picker
}) {
	g.sentences, g.prepositions, g.terminators = newPicker(grammar), newPicker(prepositions), newPicker(terminators)
	g.articles, g.adjectives, g.adverbs, g.nouns = newPicker(articles), newPicker(adjectives), newPicker(adverbs), newPicker(nouns)
	g.auxiliaries, g.verbs = newPicker(auxiliaries), newPicker(verbs)
	// A noun phrase's A, J, D and N; a verb phrase's D, X and V (its forms
	// have no punctuation).
	g.nounPhrases = parseForms(nounPhrases, map[byte]picker{'A': g.articles, 'J': g.adjectives, 'D': g.adverbs, 'N': g.nouns})
	g.verbPhrases = parseForms(verbPhrases, map[byte]picker{'D': g.adverbs, 'X': g.auxiliaries, 'V': g.verbs})
	return g
}()

func parseForms(forms dist, of map[byte]picker) phraseForms {
	pf := phraseForms{picker: newPicker(forms)}
	for _, f := range forms {
		var toks []token
		for _, w := range strings.Fields(f.text) {
			tok := token{words: of[w[0]]}
			for _, word := range tok.words.d {
				text := word.text + w[1:] + " "
				if len(text) > 16 {
					panic("tpch: the grammar's word " + text + " is over 16 bytes")
				}
				w16 := word16{n: uint8(len(text))}
				copy(w16.text[:], text)
				tok.texts = append(tok.texts, w16)
			}
			toks = append(toks, tok)
		}
		pf.forms = append(pf.forms, toks)
	}
	return pf
}

// text appends a comment of a length averaging avg (0.4 to 1.6 times it),
// cut from the pool at an offset drawn first, on stream i (dbgen's TEXT).
func (s *streams) text(b []byte, avg int, i int) []byte {
	lo, hi := lengthBounds(avg)
	p := textPool()
	off := s.unif(0, textPoolSize-hi, i)
	n := s.unifSmall(lo, hi, i)
	return append(b, p[off:off+n]...)
}

// commentStream is where a table's comments come from: their stream and
// average length, and how many a generator row cuts (0: an order's
// lines, one each). A row's comments are cut back to back, two draws each
// (offset, length), and then the stream skips to the row's boundary.
type commentStream struct{ stream, avg, perRow int }

var commentStreams = map[string]commentStream{
	Part: {sPartCmnt, 14, 1}, PartSupp: {sPsCmnt, 124, suppPerPart}, Supplier: {sSuppCmnt, 63, 1},
	Customer: {sCustCmnt, 73, 1}, Orders: {sOrderCmnt, 49, 1}, LineItem: {sLineCmnt, 27, 0},
}

// aheadRows is how many generator rows' comments touchComments reads
// ahead: about 150 cache lines for LINEITEM, which stay in the caches
// until the rows copy them.
const aheadRows = 32

// touchComments reads the first and the last byte of every comment the
// next rows generator rows of table will cut from the pool, and returns
// their sum, which the caller keeps (so that the reads stay). Each comment
// lies at a random offset in 300 MiB, and the row that copies it waits for
// its cache lines: one miss after another, half of a generator's time.
// These reads do not wait on each other, so the processor has many misses
// under way at once, and the rows then find their comments in the cache.
// The draws are made again from the streams' states at the rows' start,
// which do not move.
func (g *generator) touchComments(table string, rows int64) (sum int) {
	c, ok := commentStreams[table]
	if !ok {
		return 0
	}
	lo, hi := lengthBounds(c.avg)
	v, lines := g.s.value[c.stream], g.s.value[sOrderLines]
	ends := g.ends[:0]
	for range rows {
		n := int64(c.perRow)
		if n == 0 {
			lines = next(lines)
			n = scaledSmall(lines, 1, maxLines)
		}
		for range n {
			v = next(v)
			off := scaled(v, 0, textPoolSize-hi)
			v = next(v)
			ends = append(ends, off, off+scaledSmall(v, lo, hi)-1)
		}
		if c.perRow == 0 {
			v = mulMod(v, skipMult[2*(maxLines-n)])
		}
	}
	g.ends, g.cut, g.endsStream, g.pool = ends, 0, c.stream, textPool()
	// The reads apart from the draws: a loop of loads alone keeps more of
	// them under way than one with the draws' arithmetic between them.
	for _, off := range ends {
		sum += int(g.pool[off])
	}
	return sum
}

// comment appends the next comment of stream i, as s.text draws it: where
// touchComments found it, when it drew this stream's comments ahead, so
// that each comment's offset is drawn once (with a division: r is near
// 2^28).
func (g *generator) comment(b []byte, avg int, i int) []byte {
	if i != g.endsStream || g.cut == len(g.ends) {
		return g.s.text(b, avg, i)
	}
	s := g.s
	s.value[i] = next(next(s.value[i]))
	s.usage[i] += 2
	first, last := g.ends[g.cut], g.ends[g.cut+1]
	g.cut += 2
	return append(b, g.pool[first:last+1]...)
}

// poolBuffer is n bytes for the text pool, asked for on huge pages: every
// comment is a copy from a random offset in 300 MiB, and on 4 KiB pages
// nearly every one misses the TLB (a generator on one core made SF 1 in
// 10.3-11.6 s on huge pages, 11.6-12.1 s without). Where the kernel gives
// none, or the map fails, it is ordinary memory.
func poolBuffer(n int) []byte {
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return make([]byte, n)
	}
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE) // a hint: without it the pool still works
	return b
}
